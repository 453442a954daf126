"""The dry run numbers the trials as the run will (issue 41 item 4): Optuna's grid sampler gives trial N
the Nth point of the grid shuffled with the study's seed, not of the grid in the YAML's order."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest

from harness.planning.dry_run import describe_plan
from harness.resolve.study_spec import load_study
from tests.conftest import DATA
from tests.helpers import tiny_study

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
