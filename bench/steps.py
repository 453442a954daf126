"""Shared by the benchmarks: the mean wall time of optimizer steps."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from harness.device import autocast, describe, hardware_tags, pick_device, resolve_precision
from harness.train.loop import adamw


def mean_step_seconds(
    loss: Callable[[Any], torch.Tensor],
    batches: Sequence[Any],
    parameters: Iterable[torch.nn.Parameter],
    device: torch.device,
    dtype: torch.dtype | None,
) -> float:
    """Forward (under autocast), backward and AdamW step (the training loop's) per batch; the first step
    is a warm-up and is not counted."""
    optimizer = adamw(list(parameters), 2e-5, 0.0, device)
    times = []
    for batch in batches:
        start = time.perf_counter()
        with autocast(device, dtype):
            value = loss(batch)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return sum(times[1:]) / max(1, len(times) - 1)


def machine_header() -> str:
    """What a figure was measured on: torch, CPU model, SIMD capability, native bf16, threads, GPU, and
    the precision `auto` resolves to here."""
    return f"torch {torch.__version__}; auto = {describe(hardware_tags(pick_device(), 'auto'))}"


def precision_label(precision: str) -> str:
    """`auto (fp32)`: the requested precision and what it resolved to on this machine."""
    resolved = resolve_precision(pick_device(), precision)
    return precision if resolved == precision else f"{precision} ({resolved})"
