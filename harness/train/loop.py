"""One training loop for every method: AdamW, linear warm-up/decay, autocast, periodic dev evaluation.

The step itself is the five lines under `# step`; everything else is bookkeeping. Losses are summed on
the device and read back only every `log_every` steps, so there is no per-step host sync.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from tqdm.auto import tqdm
from transformers import get_linear_schedule_with_warmup

from harness.config import RunConfig
from harness.device import autocast
from harness.errors import HarnessError
from harness.methods.base import Method


class TrainingDiverged(HarnessError):
    """The loss became NaN or infinite."""


@dataclass
class TrainOutcome:
    best_dev: float
    best_step: int
    steps: int
    seconds: float


def batch_stream(method: Method, data: Any, config: RunConfig) -> tuple[Iterator[Any], int]:
    """Batches epoch after epoch (reshuffled with seed + epoch), and the number of steps to run."""
    per_epoch = len(method.batches(data, config.batch_size, random.Random(config.seed)))
    if per_epoch == 0:
        raise HarnessError("the training set is empty; check train_data / train_limit")
    total = per_epoch * config.epochs
    if config.max_steps:
        total = min(total, config.max_steps)

    def stream() -> Iterator[Any]:
        for epoch in range(config.epochs):
            yield from method.batches(data, config.batch_size, random.Random(config.seed + epoch))

    return stream(), total


def train(
    method: Method,
    data: Any,
    config: RunConfig,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    dev_score: Callable[[], float],
    on_metrics: Callable[[int, dict[str, float]], None],
    on_dev: Callable[[int, float], None],
    progress: bool = True,
) -> TrainOutcome:
    """Train `method` in place; return the best dev score (its weights are restored when keep_best)."""
    method.to(device).train()
    batches, total = batch_stream(method, data, config)
    params = [p for p in method.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * total), total)
    scaler = torch.amp.GradScaler(device.type) if amp_dtype == torch.float16 else None
    sums: dict[str, torch.Tensor] = {}
    since_log = 0
    best, best_step, best_state = -math.inf, 0, None
    start = time.perf_counter()
    bar = tqdm(total=total, desc="train", unit="step", disable=not progress, leave=False, mininterval=1.0)
    postfix: dict[str, str] = {}
    for step, batch in enumerate(batches, start=1):
        # step
        with autocast(device, amp_dtype):
            parts = method.loss(batch)
        optimizer.zero_grad(set_to_none=True)
        _backward_and_step(parts["loss"], params, optimizer, scaler, config.max_grad_norm)
        scheduler.step()

        for key, value in parts.items():
            sums[key] = sums.get(key, 0.0) + value.detach().float()
        since_log += 1
        bar.update(1)
        if step % config.log_every == 0 or step == total:
            means = {f"train.{k}": float(v) / since_log for k, v in sums.items()}
            if not all(math.isfinite(v) for v in means.values()):
                raise TrainingDiverged(
                    f"loss became {means['train.loss']} by step {step}; lower lr or use precision: fp32"
                )
            on_metrics(step, {**means, "train.lr": scheduler.get_last_lr()[0]})
            postfix["loss"] = f"{means['train.loss']:.4f}"
            bar.set_postfix(postfix)
            sums, since_log = {}, 0
        if step % config.eval_every == 0 or step == total:
            score = dev_score()
            if score > best:
                best, best_step = score, step
                if config.keep_best and step != total:
                    best_state = {k: v.detach().to("cpu", copy=True) for k, v in method.state_dict().items()}
            postfix.update(dev=f"{score:.2f}", best=f"{best:.2f}")
            bar.set_postfix(postfix)
            on_dev(step, score)
        if step >= total:
            break
    bar.close()
    if config.keep_best and best_state is not None and best_step != total:
        method.load_state_dict(best_state)
    return TrainOutcome(best, best_step, total, time.perf_counter() - start)


def _backward_and_step(
    loss: torch.Tensor,
    params: list[torch.nn.Parameter],
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler | None,
    max_grad_norm: float,
) -> None:
    if scaler is None:
        loss.backward()
        if max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
        optimizer.step()
        return
    scaler.scale(loss).backward()
    if max_grad_norm > 0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    scaler.step(optimizer)
    scaler.update()
