"""Shared by the benchmarks: the mean wall time of optimizer steps."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from harness.device import autocast


def mean_step_seconds(
    loss: Callable[[Any], torch.Tensor],
    batches: Sequence[Any],
    parameters: Iterable[torch.nn.Parameter],
    device: torch.device,
    dtype: torch.dtype | None,
) -> float:
    """Forward (under autocast), backward and AdamW step per batch; the first step is a warm-up and
    is not counted."""
    optimizer = torch.optim.AdamW(parameters, lr=2e-5)
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
