"""The training loop's dev evaluations: scored stages every `eval_every` steps and at their end; a stage
that is not scored never (its weights cannot become the kept checkpoint), except when it is the last.
Keep-best restoring the best evaluation's weights, gradient clipping at every update, training that
learns and reaches only the trainable parameters. The lr schedule: test_loop_schedule.py."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

from harness.train.loop import Stage, train
from tests.train.loop_settings import Settings


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


def _weights(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _keep_best_run(keep_best: bool, scores: list[float]) -> tuple[dict, list[dict]]:
    """Train one stage of len(scores) steps, dev-evaluated at each; (the weights `train` leaves, the
    weights at each evaluation, snapshot inside dev_score)."""
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    loss = lambda batch: {"loss": (model(torch.ones(1, 2)).sum() - 10.0) ** 2}  # noqa: E731
    stage = Stage("a", lambda rng: [[0]] * len(scores), [loss], lr=0.1)
    evaluated: list[dict] = []
    left = iter(scores)

    def dev_score() -> float:
        evaluated.append(_weights(model))
        return next(left)

    outcome = train(model, [stage], Settings(keep_best=keep_best), torch.device("cpu"), None, dev_score,
                    on_metrics=lambda s, m: None, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    assert outcome.best_step == 1 + scores.index(max(scores)) and outcome.steps == len(scores)
    return _weights(model), evaluated


def test_keep_best_restores_the_weights_of_the_best_evaluation() -> None:
    """The dev score peaks at the second of five evaluations and then falls: with keep_best, `train`
    leaves the model with exactly the weights it had when dev_score returned that best score (a copy
    taken then, not the live tensors, and loaded back at the end), not the final ones."""
    final, evaluated = _keep_best_run(True, [1.0, 3.0, 2.0, 1.0, 0.0])
    assert not _same(evaluated[1], evaluated[4])  # every step moved the weights
    assert _same(final, evaluated[1])
    assert not _same(final, evaluated[4])


def test_without_keep_best_the_final_weights_stay() -> None:
    """keep_best False: the best step is still reported, but the model keeps its last step's weights."""
    final, evaluated = _keep_best_run(False, [1.0, 3.0, 2.0, 1.0, 0.0])
    assert _same(final, evaluated[4]) and not _same(final, evaluated[1])


def test_a_best_last_evaluation_keeps_the_final_weights() -> None:
    """Scores that only rise: the last evaluation is the best and its weights are the final ones."""
    final, evaluated = _keep_best_run(True, [1.0, 2.0, 3.0])
    assert _same(final, evaluated[2])


@pytest.fixture
def clip_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], float, float]]:
    """Every torch.nn.utils.clip_grad_norm_ call as (ids of the parameters, max_norm, norm_type); the
    real function still clips."""
    calls: list[tuple[list[int], float, float]] = []
    real = torch.nn.utils.clip_grad_norm_

    def recording(parameters, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        parameters = list(parameters)
        bound = inspect.signature(real).bind(parameters, *args, **kwargs)
        bound.apply_defaults()
        calls.append(([id(p) for p in parameters], bound.arguments["max_norm"], bound.arguments["norm_type"]))
        return real(parameters, *args, **kwargs)

    monkeypatch.setattr(torch.nn.utils, "clip_grad_norm_", recording)
    return calls


@pytest.mark.parametrize("max_grad_norm", [0.37, 0.0])
def test_every_update_clips_its_trainable_parameters_at_max_grad_norm(
    max_grad_norm: float, clip_calls: list
) -> None:
    """Three batches of two updates are six optimizer steps, each after clipping the stage's trainable
    parameters (here the weight only) to the L2 norm `max_grad_norm`; with 0 nothing is clipped."""
    model = nn.Linear(2, 1)
    loss = lambda batch: {"loss": (model.weight.sum() + model.bias.sum() - 1.0) ** 2}  # noqa: E731
    stage = Stage("a", lambda rng: [[0]] * 3, [loss, loss], lr=0.1, trainable=lambda: [model.weight])
    train(model, [stage], Settings(max_grad_norm=max_grad_norm), torch.device("cpu"), None, lambda: 0.0,
          on_metrics=lambda s, m: None, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    assert clip_calls == ([([id(model.weight)], max_grad_norm, 2.0)] * 6 if max_grad_norm else [])


@pytest.mark.parametrize("scaled", [False, True], ids=["fp32", "grad-scaler"])
@pytest.mark.parametrize(("max_grad_norm", "norm"), [(1.0, 1.0), (0.5, 0.5), (3.0, 3.0), (0.0, 20.0)])
def test_max_grad_norm_clips_the_global_gradient_norm_and_0_leaves_it(
    max_grad_norm: float, norm: float, scaled: bool
) -> None:
    """Issue 42 item 2: `max_grad_norm` > 0 clips the gradient to that global (L2) norm before the step
    (the HF Trainer's rule, SimCSE and SupCL-Seq); 0 steps on the raw gradient (Liao's loop). One SGD step
    at lr 1 on a gradient (12, 16) of norm 20 moves the weight by exactly the clipped gradient; with a
    GradScaler (fp16) the gradient is unscaled before it is clipped."""
    from harness.train.loop import train_step

    weight = nn.Parameter(torch.zeros(2))
    loss = lambda batch: {"loss": weight @ torch.tensor([12.0, 16.0])}  # noqa: E731  (gradient norm 20)
    optimizer = torch.optim.SGD([weight], lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu") if scaled else None
    stage = Stage("a", lambda rng: [[0]], [loss])
    train_step(stage, [0], [weight], optimizer, scheduler, scaler, Settings(max_grad_norm=max_grad_norm),
               torch.device("cpu"), None)  # fmt: skip
    assert float(weight.grad.norm()) == pytest.approx(norm, rel=1e-5)
    assert weight.detach().tolist() == pytest.approx([-12.0 * norm / 20, -16.0 * norm / 20], rel=1e-5)


def test_training_fits_a_learnable_problem_and_logs_each_window_s_mean_loss() -> None:
    """Not just a finite loss: 40 steps on a noiseless linear regression bring the loss below 1% of its
    first value, and each logged `train.loss` is the mean of the losses of the steps since the last log
    (every 3 steps, and the 1-step window at the stage's end)."""
    torch.manual_seed(0)
    x = torch.randn(16, 3)
    y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3
    model = nn.Linear(3, 1)
    seen: list[float] = []

    def loss(batch: object) -> dict[str, torch.Tensor]:
        value = ((model(x) - y) ** 2).mean()
        seen.append(float(value.detach()))
        return {"loss": value}

    logged: dict[int, float] = {}

    def metrics(step: int, m: dict) -> None:
        if "train.loss" in m:
            logged[step] = m["train.loss"]

    stage = Stage("fit", lambda rng: [[0]] * 40, [loss], lr=0.3)
    train(model, [stage], Settings(log_every=3, eval_every=40), torch.device("cpu"), None, lambda: 0.0,
          on_metrics=metrics, on_dev=lambda s, v: None, progress=False)  # fmt: skip
    assert len(seen) == 40 and seen[-1] < 0.01 * seen[0]
    windows = {end: seen[end - 3 : end] for end in range(3, 40, 3)} | {40: seen[39:]}
    assert logged == pytest.approx({end: sum(w) / len(w) for end, w in windows.items()}, rel=1e-5)


def test_gradients_reach_the_trainable_parameters_only() -> None:
    """A frozen parameter (requires_grad False) gets no gradient and is not stepped; the others get a
    non-zero gradient and move. A stage's `trainable` narrows the optimizer to its parameters: the rest
    keep their weights."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    model[0].bias.requires_grad_(False)
    x = torch.randn(8, 3)
    loss = lambda batch: {"loss": ((model(x) - 1.0) ** 2).mean()}  # noqa: E731

    def run(stage: Stage) -> None:
        train(model, [stage], Settings(), torch.device("cpu"), None, lambda: 0.0,
              on_metrics=lambda s, m: None, on_dev=lambda s, v: None, progress=False)  # fmt: skip

    before = _weights(model)
    run(Stage("all", lambda rng: [[0]] * 2, [loss], lr=0.1))
    after = _weights(model)
    assert model[0].bias.grad is None and torch.equal(after["0.bias"], before["0.bias"])
    for name, p in model.named_parameters():
        if name != "0.bias":
            assert p.grad is not None and bool(p.grad.abs().sum() > 0), name
            assert not torch.equal(after[name], before[name]), name

    run(Stage("head", lambda rng: [[0]] * 2, [loss], lr=0.1, trainable=lambda: list(model[2].parameters())))
    last = _weights(model)
    assert all(torch.equal(last[k], after[k]) for k in ("0.weight", "0.bias"))
    assert all(not torch.equal(last[k], after[k]) for k in ("2.weight", "2.bias"))


def test_a_tie_keeps_the_first_best_evaluation() -> None:
    """The best checkpoint moves only on a strictly higher dev score: the earlier of two equal ones."""
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    scores = iter([2.0, 2.0, 1.0])
    outcome = train(model, [_stage("a", 3, model, True)], Settings(), torch.device("cpu"), None,
                    lambda: next(scores), on_metrics=lambda step, m: None, on_dev=lambda step, s: None,
                    progress=False)  # fmt: skip
    assert (outcome.best_dev, outcome.best_step) == (2.0, 1)


def test_each_epoch_is_shuffled_with_its_own_seed() -> None:
    """Epoch e's batches come from random.Random(seed + e): a new order every epoch, the same on every
    run."""
    import random

    from harness.train.loop import stage_batches

    def shuffled(rng: random.Random) -> list[int]:
        order = list(range(8))
        rng.shuffle(order)
        return order

    stage = Stage("a", shuffled, [], epochs=3)
    batches, total, per_epoch = stage_batches(stage, seed=5)
    seen = list(batches)
    assert (total, per_epoch) == (24, 8)
    epochs = [seen[i * 8 : (i + 1) * 8] for i in range(3)]
    assert epochs == [shuffled(random.Random(5 + e)) for e in range(3)]
    assert epochs[0] != epochs[1] != epochs[2]
