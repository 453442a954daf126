"""The learning rate the training loop applies at every optimizer step: linear warm-up over
`warmup_ratio` of a stage's updates, then linear decay to 0 at its last update (or constant), where a
stage's updates are its batches times its `updates` (Chen's fusion steps twice per batch)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from harness.train.loop import Stage, train
from tests.train.loop_settings import Settings

WARMUP = 0.25  # of a stage's updates


@pytest.fixture
def applied_lrs() -> Iterator[list[float]]:
    """The learning rate of every optimizer step, read right before the step applies it (a global
    optimizer step pre-hook, so nothing of the loop is patched)."""
    lrs: list[float] = []

    def record(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        (lr,) = {group["lr"] for group in optimizer.param_groups}
        lrs.append(lr)

    handle = register_optimizer_step_pre_hook(record)
    yield lrs
    handle.remove()


def _run(batches: int, update_names: list[str], schedule: str) -> tuple[list[str], list[float]]:
    """Train one stage (lr 0.1) of `batches` batches with one update per name; (the updates in the order
    they ran, the `train.lr` logged after each batch)."""
    model = nn.Linear(2, 1, bias=False)
    ran: list[str] = []

    def update(name: str):  # noqa: ANN202
        def loss(batch: object) -> dict[str, torch.Tensor]:
            ran.append(name)
            return {"loss": (model.weight.sum() - 1.0) ** 2}

        return loss

    stage = Stage("a", lambda rng: [[0]] * batches, [update(n) for n in update_names], lr=0.1)
    logged: list[float] = []

    def metrics(step: int, m: dict) -> None:
        if "train.lr" in m:
            logged.append(float(m["train.lr"]))

    settings = Settings(warmup_ratio=WARMUP, lr_schedule=schedule)
    train(model, [stage], settings, torch.device("cpu"), None, lambda: 0.0,
          on_metrics=metrics, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    return ran, logged


# transformers' get_linear_schedule_with_warmup(optimizer, warmup, updates) multiplies the lr by
# k / warmup for k < warmup, then by (updates - k) / (updates - warmup); get_constant_schedule_with_warmup
# by the same warm-up, then by 1 (optimization.py, _get_*_schedule_with_warmup_lr_lambda). k counts the
# scheduler steps taken before an update, so update k (0-based) applies the factor at k. With 8 updates
# and warmup_ratio 0.25: warmup = int(0.25 * 8) = 2.
LINEAR_8 = [0.0, 1 / 2, 1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6]
CONSTANT_8 = [0.0, 1 / 2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize(("schedule", "factors"), [("linear", LINEAR_8), ("constant", CONSTANT_8)])
def test_warm_up_then_decay_at_every_update(schedule: str, factors: list[float], applied_lrs: list) -> None:
    """Eight batches of one update, warmup_ratio 0.25: the lr applied at update k is 0.1 times the
    closed form above, warm-up over int(0.25 * 8) = 2 updates from 0 (not 0 warm-up updates, which would
    apply the full lr at the first one), linear decay ending at 0.1 / 6 for the last update; the constant
    schedule warms up the same and then keeps 0.1. The logged `train.lr` is the lr after each batch's
    scheduler step, so the factor at k + 1 (0 after the last update, for linear)."""
    ran, logged = _run(8, ["loss"], schedule)
    assert ran == ["loss"] * 8
    assert applied_lrs == pytest.approx([0.1 * f for f in factors], abs=1e-12)
    after = factors[1:] + [0.0 if schedule == "linear" else 1.0]
    assert logged == pytest.approx([0.1 * f for f in after], abs=1e-12)


@pytest.mark.parametrize(("schedule", "factors"), [("linear", LINEAR_8), ("constant", CONSTANT_8)])
def test_a_two_update_stage_steps_the_schedule_at_each_update(
    schedule: str, factors: list[float], applied_lrs: list
) -> None:
    """Chen's fusion: four batches of two updates (task, then contrastive) are 8 optimizer steps, and the
    schedule spans all 8: warm-up over int(0.25 * 8) = 2 of them, the two updates of a batch at
    consecutive factors, the linear decay reaching 0 only after the last update (a schedule over the 4
    batches would warm up over 1 update and apply lr 0 to the last four)."""
    ran, logged = _run(4, ["task", "contrastive"], schedule)
    assert ran == ["task", "contrastive"] * 4
    assert applied_lrs == pytest.approx([0.1 * f for f in factors], abs=1e-12)
    assert min(applied_lrs[2:]) > 0.0  # every update after the warm-up trains
    after = [factors[k] for k in (2, 4, 6)] + [0.0 if schedule == "linear" else 1.0]
    assert logged == pytest.approx([0.1 * f for f in after], abs=1e-12)


def test_each_stage_has_its_own_schedule(applied_lrs: list) -> None:
    """A second stage warms up and decays again over its own updates at its own lr (a fresh optimizer and
    scheduler per stage), not on from where the first ended."""
    model = nn.Linear(2, 1, bias=False)
    loss = lambda batch: {"loss": (model.weight.sum() - 1.0) ** 2}  # noqa: E731
    stages = [
        Stage("a", lambda rng: [[0]] * 4, [loss], lr=0.1),
        Stage("b", lambda rng: [[0]] * 8, [loss], lr=0.2),
    ]
    train(model, stages, Settings(warmup_ratio=WARMUP), torch.device("cpu"), None, lambda: 0.0,
          on_metrics=lambda s, m: None, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    first = [0.0, 1.0, 2 / 3, 1 / 3]  # 4 updates: warmup int(0.25 * 4) = 1, decay over the other 3
    assert applied_lrs == pytest.approx([0.1 * f for f in first] + [0.2 * f for f in LINEAR_8], abs=1e-12)
