"""A study that grows (issue 58 item 1): adding a searched value and a seed runs only the new grid points
in the same study, keeps the finished trials (the same MLflow runs, never re-run), and reports old and new
rows in one table; any other change still derives a study of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.resolve.derived import growth
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, harness_here, tiny_study


def test_only_added_grid_points_are_growth() -> None:
    old = {"base": {"lr": 1}, "search": {"variant": ["a"], "t": [0.1, 0.2], "seed": [1]}, "sampler": "grid",
           "variants": {"a": {"x": 1}}}  # fmt: skip
    more = {**old, "search": {"variant": ["a"], "t": [0.2, 0.1, 0.3], "seed": [1, 2]}}
    grown = [str(c) for c in growth(old, more) or []]
    assert grown == ["seeds [1] -> [1, 2]", "search.t [0.1, 0.2] -> [0.2, 0.1, 0.3]"]
    variant = {
        **old,
        "search": {**old["search"], "variant": ["a", "b"]},
        "variants": {"a": {"x": 1}, "b": {"x": 2}},
    }
    assert growth(old, variant) is not None
    assert growth(old, {**old, "search": {**old["search"], "t": [0.1, 0.3]}}) is None  # a value dropped
    assert growth(old, {**old, "base": {"lr": 2}, "search": more["search"]}) is None  # a shared setting
    assert growth(old, {**old, "variants": {"a": {"x": 2}}}) is None  # a variant redefined
    assert growth(old, {**old, "search": {**old["search"], "u": [1]}}) is None  # a new searched field
    assert growth({**old, "sampler": "tpe"}, {**more, "sampler": "tpe"}) is None
    assert growth(old, old) is None
    # seeds given to a study that had none: growth where they hold the seed its trials ran with
    unseeded = {"base": {"lr": 1}, "search": {"t": [0.1]}, "sampler": "grid"}
    seeded = {**unseeded, "search": {"t": [0.1], "seed": [42, 1]}}
    assert [str(c) for c in growth(unseeded, seeded) or []] == ["seeds unset -> [42, 1]"]
    assert growth(unseeded, {**unseeded, "search": {"t": [0.1], "seed": [1, 2]}}) is None  # 42 dropped
    own = {**unseeded, "base": {"lr": 1, "seed": 7}}
    assert growth(own, {**own, "search": {"t": [0.1], "seed": [7, 8]}}) is not None  # the base's seed
    varied = {**unseeded, "search": {"t": [0.1], "variant": ["a"]}, "variants": {"a": {"seed": 3}}}
    assert growth(varied, {**varied, "search": {**varied["search"], "seed": [42, 1]}}) is None


@pytest.mark.slow
def test_seeds_added_to_a_study_without_any_keep_its_trials_as_the_implicit_seeds(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    """`harness new` writes no seeds: its trials ran with seed 42. `--set 'seeds=[42,1]'` grows the study:
    the dry run marks the seed-42 trials done, the run keeps them and runs only seed 1."""
    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3]}, name="unseeded", max_steps=1)
    assert harness_here("run-study", path, "--no-progress").returncode == 0
    before = {run.info.run_id for run in child_runs("unseeded")}
    more = ["--set", "seeds=[42,1]"]
    dry = harness_here("run-study", path, *more, "--dry-run")
    assert "grows study unseeded (seeds unset -> [42, 1])" in dry.stdout
    assert "2 of 4 trial(s) already done here; 2 to run" in dry.stdout
    grown = harness_here("run-study", path, *more, "--no-progress")
    assert grown.returncode == 0, grown.stderr
    assert "study unseeded grown: 2 ended trial(s) kept on the grown grid, 2 new point(s)" in grown.stdout
    runs = child_runs("unseeded")
    assert len(runs) == 4 and before < {run.info.run_id for run in runs}
    added = [r.data.params for r in runs if r.info.run_id not in before]
    new = sorted((params["lambda"], params["seed"]) for params in added)
    assert new == [("0.1", "1"), ("0.3", "1")]


@pytest.mark.slow
def test_a_study_grown_by_a_value_and_a_seed_runs_only_the_new_trials_into_one_table(
    tmp_path: Path, tiny_bert: Path, harness_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3]}, name="my_tau", max_steps=2))
    config = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**config, "seeds": [1]}))
    assert harness_here("run-study", str(path), "--no-progress").returncode == 0
    before = {run.info.run_id for run in child_runs("my_tau")}

    grow = ["run-study", str(path), "--search", "lambda=0.1,0.3,0.5", "--set", "seeds=[1,2]", "--no-progress"]
    grown = harness_here(*grow)
    assert grown.returncode == 0, grown.stderr
    assert (
        "grows study my_tau (search.lambda [0.1, 0.3] -> [0.1, 0.3, 0.5]; seeds [1] -> [1, 2])"
        in grown.stdout
    )
    assert "study my_tau grown: 2 ended trial(s) kept on the grown grid, 4 new point(s)" in grown.stdout
    assert "study my_tau.tiny: 6 of 6 trial(s) complete" in grown.stdout and "failed" not in grown.stderr
    runs = child_runs("my_tau")
    assert len(runs) == 6 and before < {run.info.run_id for run in runs}  # the two kept, four new
    points = {(run.data.params["lambda"], run.data.params["seed"]) for run in runs}
    assert points == {(lam, seed) for lam in ("0.1", "0.3", "0.5") for seed in ("1", "2")}
    assert len({run.data.tags["mlflow.parentRunId"] for run in runs}) == 1  # one parent: one study

    again = harness_here(*grow)  # the same command: nothing left to run, no second growth
    assert "grown:" not in again.stdout and len(child_runs("my_tau")) == 6
    # grown again (a trial that yielded its grid point to another, SURPLUS, has no point to keep)
    third = harness_here(*grow[:-2], "seeds=[1,2,3]", "--no-progress")
    assert "study my_tau grown: 6 ended trial(s) kept on the grown grid, 3 new point(s)" in third.stdout
    assert third.returncode == 0 and len(child_runs("my_tau")) == 9
    monkeypatch.chdir(tmp_path)
    report = harness_here("report", "my_tau", "--no-pdf")
    assert report.returncode == 0, report.stderr
    table = (tmp_path / "reports" / "build" / "my_tau" / "results.tex").read_text()
    assert all(f"$\\lambda$ = {lam} ($n=3$)" in table for lam in ("0.1", "0.3", "0.5"))
    assert Tracker().get_run(next(iter(before))).info.status == "FINISHED"
