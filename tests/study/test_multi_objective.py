"""Multi-objective studies: `objectives:` with directions runs an Optuna multi-objective study whose trials'
values are their logged metrics, the result is the Pareto front (checked against a plain dominance count),
and what cannot work is refused in one line (pruning, save_top_k, an undeclared or unlogged metric)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.resolve.study_spec import load_study
from harness.study.optuna_study import open_storage, open_study
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, harness_here, tiny_study

SCORERS = [
    {"metric": "objective", "direction": "maximize"},
    {"metric": "train.seconds", "direction": "minimize"},
]


def _with(path: str, **top: object) -> str:
    config = yaml.safe_load(Path(path).read_text())
    Path(path).write_text(yaml.safe_dump({**config, **top}))
    return path


def _dominated(mine: tuple[float, float], other: tuple[float, float]) -> bool:
    """`other` is at least as good on both (more objective, fewer seconds) and better on one."""
    at_least = other[0] >= mine[0] and other[1] <= mine[1]
    return at_least and (other[0] > mine[0] or other[1] < mine[1])


@pytest.mark.slow
def test_a_study_with_two_objectives_ends_on_its_pareto_front(tmp_path: Path, tiny_bert: Path) -> None:
    path = _with(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5, 0.9]}, name="front", max_steps=2),
                 objectives=SCORERS)  # fmt: skip
    result = harness_here("run-study", path, "--no-progress")
    assert result.returncode == 0, result.stderr
    study = load_study(path)
    opt = open_study(study, open_storage(None), create=False)
    assert [d.name for d in opt.directions] == ["MAXIMIZE", "MINIMIZE"]
    runs = {int(r.data.tags["trial"]): r for r in child_runs("front")}
    values = {t.number: tuple(t.values) for t in opt.trials}
    for number, run in runs.items():  # each trial's values are the metrics its run logged
        logged = metrics_of(run)
        assert values[number] == (logged["objective"], logged["train.seconds"])
    front = sorted(n for n, v in values.items() if not any(_dominated(v, w) for w in values.values()))
    assert front and sorted(t.number for t in opt.best_trials) == front
    (parent,) = Tracker().search_runs([run.info.experiment_id], "tags.`harness.role` = 'study'")
    assert parent.data.tags["pareto_trials"] == ", ".join(map(str, front))
    assert parent.data.tags["objectives"] == "objective maximize, train.seconds minimize"
    assert metrics_of(parent)["trials.pareto"] == len(front) and "best.objective" not in metrics_of(parent)
    assert "Pareto front of objective (maximize), train.seconds (minimize): " in result.stdout
    for number in front:
        assert f"  trial {number} (lambda=" in result.stdout


@pytest.mark.parametrize(
    ("top", "message"),
    [
        ({"pruner": "median"}, "a multi-objective study cannot be pruned"),
        ({"save_top_k": 2}, "save_top_k ranks trials by one objective"),
        (
            {"objectives": [{"metric": "objective"}, {"metric": "STS.mean"}]},
            "metric 'STS.mean' is undeclared",
        ),
        ({"objectives": [{"metric": "objective"}]}, "at least 2 items"),
    ],
)
def test_what_cannot_work_is_refused_at_load(
    tmp_path: Path, tiny_bert: Path, top: dict, message: str
) -> None:
    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="refused")
    with pytest.raises(HarnessError, match=message):
        load_study(_with(path, **{"objectives": SCORERS, **top}))


@pytest.mark.slow
def test_an_objective_the_trial_does_not_log_fails_it_saying_what_it_logs(
    tmp_path: Path, tiny_bert: Path
) -> None:
    objectives = [{"metric": "objective"}, {"metric": "MR.devacc"}]  # MR is not among the final tasks
    path = _with(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="unlogged", max_steps=1),
                 objectives=objectives)  # fmt: skip
    run_study(load_study(path), progress=False)
    (run,) = child_runs("unlogged")
    assert run.info.status == "FAILED"
    assert run.data.tags["error"].startswith("HarnessError: objective 'MR.devacc' is not among this trial's")


@pytest.mark.parametrize(("sampler", "kind"), [("nsga2", "NSGAIISampler"), ("tpe", "TPESampler")])
def test_the_samplers_open_a_study_with_each_objectives_direction(
    tmp_path: Path, tiny_bert: Path, sampler: str, kind: str
) -> None:
    path = _with(tiny_study(tmp_path, tiny_bert, {"lambda": {"low": 0.1, "high": 0.9}}, name=sampler),
                 objectives=SCORERS, sampler=sampler, n_trials=3)  # fmt: skip
    study = load_study(path)
    opt = open_study(study, open_storage(str(tmp_path / "optuna.journal")), create=True)
    assert type(opt.sampler).__name__ == kind and [d.name for d in opt.directions] == ["MAXIMIZE", "MINIMIZE"]
    trial = opt.ask()  # the sampler proposes within the range for a two-value study
    assert 0.1 <= trial.suggest_float("lambda", 0.1, 0.9) <= 0.9
