"""One training loop for every method: stages in order, AdamW, linear warm-up/decay, autocast, periodic
dev evaluation, best checkpoint.

A method is a list of `Stage`s (contrastive pre-training, task fine-tuning, ...), each with its own
batches, epochs, learning rate and step budget. A stage has one or more `updates`: each is a loss
function, and every batch gets one optimizer step per update, in order (Chen's fusion: the task loss,
then the contrastive loss, on the same batch). Losses are summed on the device and read back only every
`log_every` steps, so there is no per-step host sync.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm
from transformers import get_constant_schedule_with_warmup, get_linear_schedule_with_warmup

from harness.bar_line import bar_line
from harness.device import autocast
from harness.errors import HarnessError
from harness.notices import notice_once
from harness.train.pcgrad import pcgrad_backward

if TYPE_CHECKING:
    from harness.train.stage_cache import CachedStages

LossFn = Callable[[Any], dict[str, torch.Tensor]]


class TrainingDiverged(HarnessError):
    """The loss became NaN or infinite."""


@dataclass
class Stage:
    """One phase of a method. `updates` are loss functions (one optimizer step each per batch); a loss
    dict holds the total under "loss", parts to log, and for `combine: pcgrad` the per-task losses under
    "task_losses" (a stacked tensor). A stage that does not train what the scorer scores (contrastive
    pre-training before task fine-tuning: the task heads are still random) is not `scored`, so its
    weights can never be kept as the best checkpoint."""

    name: str
    make_batches: Callable[[random.Random], Sequence[Any]]
    updates: Sequence[LossFn]
    epochs: int = 1
    lr: float = 2e-5
    max_steps: int | None = None
    trainable: Callable[[], list[nn.Parameter]] | None = None
    combine: Literal["sum", "pcgrad"] = "sum"
    pcgrad_reduction: Literal["mean", "sum"] = "mean"  # harness.train.pcgrad
    scored: bool = True  # dev-evaluated (every eval_every steps and at its end); the last stage always is
    first_epoch: int = 0  # shuffles as epochs first_epoch, first_epoch + 1, ... (a repeated stage goes on)
    remember: Callable[[list[Any]], None] | None = None  # given the stage's batches before its first step


class LoopSettings(Protocol):
    """The run settings the loop reads (RunConfig has them all)."""

    seed: int
    weight_decay: float
    adam_eps: float
    warmup_ratio: float
    lr_schedule: Literal["linear", "constant"]
    max_grad_norm: float
    log_every: int
    eval_every: int | Literal["epoch"]
    keep_best: bool


@dataclass
class TrainOutcome:
    best_dev: float
    best_step: int
    steps: int
    seconds: float
    tested_dev: float = -math.inf  # the dev score of the weights the trial tests: the best (keep_best), else
    # the last step's (issue 58 item 4: the objective describes the model that was tested)


def adamw(
    params: list[nn.Parameter], lr: float, weight_decay: float, device: torch.device, eps: float = 1e-8
) -> torch.optim.AdamW:
    """AdamW (Loshchilov & Hutter) with PyTorch's fused kernel where there is one (CPU, CUDA): the same
    update in one pass over the parameters, faster than the per-tensor loop.
    Weight decay applies to weight matrices only, not to biases and LayerNorm weights (1-D tensors), as
    in BERT's optimizer (google-research/bert optimization.py) and Hugging Face's Trainer. `eps`: the
    run's `adam_eps` (1e-8, PyTorch's default; 1e-6 where a paper's code used transformers.AdamW or the
    minBERT starter code's)."""
    groups = [
        {"params": [p for p in params if p.ndim > 1], "weight_decay": weight_decay},
        {"params": [p for p in params if p.ndim <= 1], "weight_decay": 0.0},
    ]
    groups = [g for g in groups if g["params"]]
    return torch.optim.AdamW(groups, lr=lr, eps=eps, fused=device.type in ("cpu", "cuda"))


def stage_batches(stage: Stage, seed: int) -> tuple[Iterator[Any], int, int]:
    """Batches epoch after epoch (reshuffled with seed + epoch), the number of steps to run and the
    steps of one epoch."""
    per_epoch = len(stage.make_batches(random.Random(seed)))
    if per_epoch == 0:
        raise HarnessError(f"stage {stage.name}: the training set is empty; check its data fields")
    total = per_epoch * stage.epochs
    if stage.max_steps:
        if stage.max_steps > total:
            notice_once(f"note: stage {stage.name}: max_steps {stage.max_steps} is more than its "
                      f"{stage.epochs} epoch(s) of {per_epoch} steps; the epoch budget ends it at step "
                      f"{total} (raise epochs to reach max_steps)")  # fmt: skip
        total = min(total, stage.max_steps)

    def stream() -> Iterator[Any]:
        for epoch in range(stage.epochs):
            yield from stage.make_batches(random.Random(seed + epoch))

    return stream(), total, per_epoch


def evaluates_now(stage_step: int, total: int, per_epoch: int, eval_every: int | str) -> bool:
    """A scored stage is dev-evaluated at its end and every `eval_every` of its steps, or at each epoch's
    end with `eval_every: epoch` (Chen 5.3: "evaluated on the dev split after each epoch")."""
    every = per_epoch if eval_every == "epoch" else int(eval_every)
    return stage_step == total or stage_step % every == 0


@dataclass
class Progress:
    """What the loop carries from stage to stage (and the stage cache stores)."""

    step: int = 0
    best: float = -math.inf
    best_step: int = 0
    best_state: dict[str, torch.Tensor] | None = None
    latest: float = -math.inf  # the last dev score (the end of the last stage is always evaluated)


def reseed(seed: int) -> None:
    """The global RNGs (dropout masks, ...) from `seed`, right before the first stage: training does not
    depend on how much randomness building the model used (harness.train.stage_keys)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def train(
    model: nn.Module,
    stages: Sequence[Stage],
    config: LoopSettings,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    dev_score: Callable[[], float],
    on_metrics: Callable[[int, dict[str, float]], None],
    on_dev: Callable[[int, float], None],
    progress: bool = True,
    cache: CachedStages | None = None,
) -> TrainOutcome:
    """Run every stage in order; return the best dev score (its weights are restored when keep_best).
    With a stage cache, the longest run of leading stages found in it is loaded instead of trained, and
    each stage trained before the last is stored (harness.train.stage_cache)."""
    model.to(device).train()
    reseed(config.seed)
    loop = _Loop(model, stages, config, device, amp_dtype, dev_score, on_metrics, on_dev, progress)
    state, start = Progress(), time.perf_counter()
    index = 0
    if cache is not None:
        cache.begin(model)
        index = cache.resume(model, state)
    while index < len(stages):
        if cache is not None and cache.cacheable(index):
            with cache.claim(index) as mine:
                if not mine:  # another process trained it meanwhile: load it (or, gone again, claim again)
                    index = cache.resume(model, state, trained=index)
                    continue
                _run_stage(loop, index, state)
                cache.save(index, model, state)
        else:
            _run_stage(loop, index, state)
        index += 1
    if not stages:  # nothing to train (an ensemble): score once
        state.best = state.latest = dev_score()
        on_dev(0, state.best)
    if config.keep_best and state.best_state is not None and state.best_step != state.step:
        model.load_state_dict(state.best_state)
    tested = state.best if config.keep_best else state.latest
    return TrainOutcome(state.best, state.best_step, state.step, time.perf_counter() - start, tested)


@dataclass
class _Loop:
    """`train`'s arguments, as every stage reads them."""

    model: nn.Module
    stages: Sequence[Stage]
    config: LoopSettings
    device: torch.device
    amp_dtype: torch.dtype | None
    dev_score: Callable[[], float]
    on_metrics: Callable[[int, dict[str, float]], None]
    on_dev: Callable[[int, float], None]
    progress: bool


def _run_stage(loop: _Loop, index: int, state: Progress) -> None:
    """Train stage `index`, carrying `state` (steps, best score and checkpoint) on."""
    model, stages, config, device, amp_dtype = (
        loop.model,
        loop.stages,
        loop.config,
        loop.device,
        loop.amp_dtype,
    )
    dev_score, on_metrics, on_dev, progress = loop.dev_score, loop.on_metrics, loop.on_dev, loop.progress
    stage = stages[index]
    batches, total, per_epoch = stage_batches(stage, config.seed + stage.first_epoch)
    if stage.remember is not None:  # e.g. every sentence tokenized once, ahead (harness.encoders.token_store)
        planned = list(itertools.islice(batches, total))
        stage.remember(planned)
        batches = iter(planned)
    params = stage.trainable() if stage.trainable else [p for p in model.parameters() if p.requires_grad]
    optimizer = adamw(params, stage.lr, config.weight_decay, device, config.adam_eps)
    updates = total * len(stage.updates)
    warmup = int(config.warmup_ratio * updates)
    scheduler = (
        get_constant_schedule_with_warmup(optimizer, warmup)
        if config.lr_schedule == "constant"
        else get_linear_schedule_with_warmup(optimizer, warmup, updates)
    )
    scaler = torch.amp.GradScaler(device.type) if amp_dtype == torch.float16 else None
    sums: dict[str, torch.Tensor] = {}
    since_log, postfix = 0, {}
    bar = tqdm(total=total, desc=f"train {stage.name}", unit="step", disable=not progress, leave=False,
               mininterval=1.0, position=bar_line())  # fmt: skip
    for stage_step, batch in enumerate(batches, start=1):
        state.step += 1
        for parts in train_step(
            stage, batch, params, optimizer, scheduler, scaler, config, device, amp_dtype
        ):
            for key, value in parts.items():
                if key != "task_losses":
                    sums[key] = sums.get(key, 0.0) + value.detach().float()
        since_log += 1
        bar.update(1)
        if stage_step % config.log_every == 0 or stage_step == total:
            means = {f"train.{k}": float(v) / since_log for k, v in sums.items()}
            if not all(math.isfinite(v) for v in means.values()):
                raise TrainingDiverged(
                    f"loss became {means['train.loss']} by step {state.step} (stage {stage.name}); "
                    "lower lr or use precision: fp32"
                )
            on_metrics(state.step, {**means, "train.lr": scheduler.get_last_lr()[0], "train.stage": index})
            postfix["loss"] = f"{means['train.loss']:.4f}"
            bar.set_postfix(postfix)
            sums, since_log = {}, 0
        if stage_step % per_epoch == 0:
            on_metrics(state.step, {"train.epoch": stage.first_epoch + stage_step // per_epoch})
        last = index == len(stages) - 1 and stage_step == total
        if last or (stage.scored and evaluates_now(stage_step, total, per_epoch, config.eval_every)):
            bar.set_postfix({**postfix, "now": "evaluating dev"}, refresh=True)  # a dev pass takes seconds
            score = state.latest = dev_score()
            if score > state.best:
                state.best, state.best_step = score, state.step
                if config.keep_best and not last:
                    state.best_state = {
                        k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()
                    }
            postfix.update(dev=f"{score:.2f}", best=f"{state.best:.2f}")
            bar.set_postfix(postfix)
            on_dev(state.step, score)
        if stage_step >= total:
            break
    bar.close()


def train_step(
    stage: Stage,
    batch: Any,
    params: list[nn.Parameter],
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    scaler: torch.amp.GradScaler | None,
    config: LoopSettings,
    device: torch.device,
    amp_dtype: torch.dtype | None,
) -> list[dict[str, torch.Tensor]]:
    """One training step on `batch`: per update, the loss under autocast, backward (PCGrad where the stage
    combines so), clipping and the optimizer and scheduler steps; each update's loss parts, in order."""
    done = []
    for update in stage.updates:
        with autocast(device, amp_dtype):
            parts = update(batch)
        optimizer.zero_grad(set_to_none=True)
        _backward(parts, params, stage, scaler)
        _clip_and_step(params, optimizer, scaler, config.max_grad_norm)
        scheduler.step()
        done.append(parts)
    return done


def _backward(
    parts: dict[str, torch.Tensor],
    params: list[nn.Parameter],
    stage: Stage,
    scaler: torch.amp.GradScaler | None,
) -> None:
    if stage.combine == "pcgrad" and "task_losses" in parts:
        losses = list(parts["task_losses"].unbind(0))
        scaled = [scaler.scale(x) for x in losses] if scaler else losses
        pcgrad_backward(scaled, params, reduction=stage.pcgrad_reduction)
    elif scaler is not None:
        scaler.scale(parts["loss"]).backward()
    else:
        parts["loss"].backward()


def _clip_and_step(
    params: list[nn.Parameter],
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler | None,
    max_norm: float,
) -> None:
    if scaler is not None:
        if max_norm > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, max_norm)
        scaler.step(optimizer)
        scaler.update()
        return
    if max_norm > 0:
        torch.nn.utils.clip_grad_norm_(params, max_norm)
    optimizer.step()
