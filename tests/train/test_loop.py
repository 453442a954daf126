"""The training loop's dev evaluations: scored stages every `eval_every` steps and at their end; a stage
that is not scored never (its weights cannot become the kept checkpoint), except when it is the last."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from torch import nn

from harness.train.loop import Stage, train


@dataclass
class Settings:
    seed: int = 0
    weight_decay: float = 0.0
    warmup_ratio: float = 0.0
    lr_schedule: str = "linear"
    max_grad_norm: float = 1.0
    log_every: int = 1
    eval_every: int = 1
    keep_best: bool = True


def _stage(name: str, steps: int, model: nn.Module, scored: bool) -> Stage:
    loss = lambda batch: {"loss": (model.weight.sum() - 1.0) ** 2}  # noqa: E731
    return Stage(name, lambda rng: [[0]] * steps, [loss], lr=0.1, scored=scored)


def _evaluated_steps(scored: tuple[bool, bool]) -> tuple[list[int], float]:
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    evaluated: list[int] = []
    scores = iter([5.0, 4.0, 3.0, 2.0, 1.0])  # the first evaluation is the best
    stages = [_stage("a", 3, model, scored[0]), _stage("b", 2, model, scored[1])]
    outcome = train(model, stages, Settings(), torch.device("cpu"), None, lambda: next(scores),
                    on_metrics=lambda step, m: None, on_dev=lambda step, s: evaluated.append(step),
                    progress=False)  # fmt: skip
    return evaluated, outcome.best_step


def test_an_unscored_stage_is_not_evaluated_and_cannot_be_the_best_checkpoint() -> None:
    assert _evaluated_steps((True, True)) == ([1, 2, 3, 4, 5], 1)
    assert _evaluated_steps((False, True)) == ([4, 5], 4)


def test_the_last_stage_is_always_evaluated() -> None:
    assert _evaluated_steps((True, False)) == ([1, 2, 3, 5], 1)


def test_weight_decay_skips_biases_and_norm_weights() -> None:
    from harness.train.loop import adamw

    model = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3))
    groups = adamw(list(model.parameters()), 1e-3, 0.01, torch.device("cpu")).param_groups
    decayed = {id(p) for g in groups if g["weight_decay"] == 0.01 for p in g["params"]}
    assert decayed == {id(model[0].weight)}


@pytest.mark.parametrize(("schedule", "expected"), [("linear", [0.1 * 3 / 4, 0.1 * 2 / 4, 0.1 / 4, 0.0]),
                                                     ("constant", [0.1] * 4)])  # fmt: skip
def test_lr_schedule_linear_decays_and_constant_keeps_the_lr(schedule: str, expected: list[float]) -> None:
    model = nn.Linear(2, 1)
    lrs: list[float] = []

    def metrics(step: int, m: dict) -> None:
        if "train.lr" in m:
            lrs.append(float(m["train.lr"]))

    train(model, [_stage("a", 4, model, True)], Settings(lr_schedule=schedule), torch.device("cpu"), None,
          lambda: 0.0, on_metrics=metrics, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    assert lrs == pytest.approx(expected)


def _evaluations(eval_every: int | str, stages: list[tuple[int, int]]) -> tuple[list[int], list[tuple]]:
    """(steps evaluated, (step, epoch) logged) for stages of (steps per epoch, epochs)."""
    model = nn.Linear(2, 1)
    loss = lambda batch: {"loss": (model.weight.sum() - 1.0) ** 2}  # noqa: E731
    built = [
        Stage(f"s{i}", lambda rng, n=n: [[0]] * n, [loss], epochs=e, lr=0.1)
        for i, (n, e) in enumerate(stages)
    ]
    evaluated: list[int] = []
    epochs: list[tuple] = []

    def metrics(step: int, m: dict) -> None:
        if "train.epoch" in m:
            epochs.append((step, m["train.epoch"]))

    train(model, built, Settings(eval_every=eval_every), torch.device("cpu"), None, lambda: 0.0,
          on_metrics=metrics, on_dev=lambda step, s: evaluated.append(step), progress=False)  # fmt: skip
    return evaluated, epochs


def test_eval_every_epoch_evaluates_at_each_epoch_end() -> None:
    evaluated, epochs = _evaluations("epoch", [(2, 3)])
    assert evaluated == [2, 4, 6] and epochs == [(2, 1), (4, 2), (6, 3)]


def test_eval_every_counts_the_steps_of_each_stage() -> None:
    # two stages of 3 steps, every 2 steps of a stage and at each stage's end
    assert _evaluations(2, [(3, 1), (3, 1)])[0] == [2, 3, 5, 6]


def test_a_max_steps_beyond_the_epochs_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26 item 5: the epoch budget ends a stage first; that is said once, not at every trial."""
    from harness.train.loop import stage_batches

    stage = Stage("unsup", lambda rng: [[0]] * 6, [], epochs=2, max_steps=30)
    for _ in range(2):
        _, total, per_epoch = stage_batches(stage, seed=0)
        assert (total, per_epoch) == (12, 6)
    said = capsys.readouterr().err.splitlines()
    assert said == [
        "note: stage unsup: max_steps 30 is more than its 2 epoch(s) of 6 steps; the epoch budget ends it at "
        "step 12 (raise epochs to reach max_steps)"
    ]
    assert stage_batches(Stage("x", lambda rng: [[0]] * 6, [], max_steps=4), seed=0)[1] == 4
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("max_grad_norm", "norm"), [(1.0, 1.0), (0.0, 20.0)])
def test_max_grad_norm_clips_the_global_gradient_norm_and_0_leaves_it(
    max_grad_norm: float, norm: float
) -> None:
    """Issue 42 item 2: `max_grad_norm` > 0 clips the gradient to that global norm before the step (the
    HF Trainer's rule, SimCSE and SupCL-Seq); 0 steps on the raw gradient (Liao's loop)."""
    from harness.train.loop import train_step

    weight = nn.Parameter(torch.zeros(2))
    loss = lambda batch: {"loss": weight @ torch.tensor([12.0, 16.0])}  # noqa: E731  (gradient norm 20)
    optimizer = torch.optim.SGD([weight], lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    stage = Stage("a", lambda rng: [[0]], [loss])
    train_step(stage, [0], [weight], optimizer, scheduler, None, Settings(max_grad_norm=max_grad_norm),
               torch.device("cpu"), None)  # fmt: skip
    assert float(weight.grad.norm()) == pytest.approx(norm, rel=1e-5)
    assert weight.detach().tolist() == pytest.approx([-12.0 * norm / 20, -16.0 * norm / 20], rel=1e-5)
