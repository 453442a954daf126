"""The dry run numbers the trials as the run will (issue 41 item 4): Optuna's grid sampler gives trial N
the Nth point of the grid shuffled with the study's seed, not of the grid in the YAML's order."""

from __future__ import annotations

import io
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.planning.dry_run import describe_plan
from harness.resolve.study_spec import load_study
from tests.conftest import DATA
from tests.helpers import harness_here, tiny_study

TRIAL = re.compile(r"^  trial (\d+): (.*?)  steps ")


def _planned(lines: list[str]) -> dict[int, dict[str, str]]:
    """{trial number: {field: value as printed}} from the dry run's trial lines."""
    trials = {}
    for line in lines:
        if found := TRIAL.match(line):
            trials[int(found[1])] = dict(pair.split("=", 1) for pair in found[2].split())
    return trials


def _optuna_rule(grid: dict[str, list], seed: int) -> dict[int, dict[str, str]]:
    """The rule as optuna/samplers/_grid.py states it, written out: the grid over the sorted field names,
    shuffled in place by numpy's RandomState(seed); trial N gets point N."""
    names = sorted(grid)
    points = list(itertools.product(*(grid[name] for name in names)))
    np.random.RandomState(seed).shuffle(points)  # type: ignore[arg-type]
    return {n: {k: str(v) for k, v in zip(names, point, strict=True)} for n, point in enumerate(points)}


def test_the_dry_run_lists_the_shuffled_grid_by_its_seed(tmp_path: Path, tiny_bert: Path) -> None:
    grid = {"tau": [0.5, 1.0], "lambda": [0.1, 0.5, 0.9]}  # not in name order: Optuna sorts them
    for seed in (42, 7):
        path = tiny_study(tmp_path, tiny_bert, grid, **({"seed": seed} if seed != 42 else {}))
        lines = describe_plan(load_study(path), DATA)
        assert _planned(lines) == _optuna_rule(grid, seed), seed
        assert (
            f"trial numbers as a new study gives them (Optuna shuffles the grid, seed {seed};"
            in "\n".join(lines)
        )


@pytest.mark.slow
def test_a_one_worker_run_numbers_its_trials_as_the_dry_run_said(tmp_path: Path, tiny_bert: Path) -> None:
    """A real run (two trials, one training step each): each trial's number and searched value are the dry
    run's. The seed-42 shuffle of two points reverses them: trial 0 is the YAML's second value."""
    from harness.study.runner import run_study

    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5]}, max_steps=1, eval_every=1)
    study = load_study(path)
    planned = _planned(describe_plan(study, DATA))
    assert planned == {0: {"lambda": "0.5"}, 1: {"lambda": "0.1"}}
    opt = run_study(study, progress=False)
    assert {t.number: {k: str(v) for k, v in t.params.items()} for t in opt.trials} == planned


class _Terminal(io.StringIO):
    """Standard input that says it is a terminal, with the answers a user would type."""

    def isatty(self) -> bool:
        return True


@pytest.mark.slow
def test_a_dry_run_of_a_study_that_ran_says_what_is_done_and_fresh_asks_first(
    tmp_path: Path, tiny_bert: Path, harness_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 58 item 3: a finished study's dry run marks its trials done and counts no steps to run;
    `--fresh --dry-run` says what it would delete; `--fresh` on a terminal asks, `--yes` does not."""
    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3]}, name="done", max_steps=1)
    assert harness_here("run-study", path, "--no-progress").returncode == 0
    again = harness_here("run-study", path, "--dry-run")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("done (finished here before; not run again)") == 2
    assert "2 of 2 trial(s) already done here; 0 to run" in again.stdout
    assert "training steps to run: 0" in again.stdout
    fresh = harness_here("run-study", path, "--dry-run", "--fresh")
    assert "--fresh would delete study done.tiny here, with its 2 finished trial(s)" in fresh.stdout
    assert "training steps to run: 2" in fresh.stdout and "already done" not in fresh.stdout

    monkeypatch.setattr(sys, "stdin", _Terminal("n\n"))
    refused = harness_here("run-study", path, "--fresh", "--no-progress")
    assert refused.returncode == 1 and "go on?" in refused.stdout and "nothing deleted" in refused.stderr
    assert "2 of 2 trial(s) already done" in harness_here("run-study", path, "--dry-run").stdout  # kept
    monkeypatch.setattr(sys, "stdin", _Terminal(""))
    replaced = harness_here("run-study", path, "--fresh", "--yes", "--no-progress")
    assert replaced.returncode == 0 and "go on?" not in replaced.stdout
    assert "--fresh: deleted the earlier MLflow runs of done" in replaced.stdout + replaced.stderr
