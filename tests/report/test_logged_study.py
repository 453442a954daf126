"""The report reads MLflow alone (issue 44 item 5, issue 57 item 1): the paper profile a report holds
runs against comes from the plans the parent run logged when the study started (`paper_plans.json`), so
editing or deleting the study file afterwards changes nothing in the report of those runs; and every trial
logs its own plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.report.build import logged_paper_plans
from harness.report.setting import paper_setting
from harness.resolve.paper_plans import PAPER_PLANS_ARTIFACT
from harness.resolve.run_plan import PLAN_ARTIFACT
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.study_runs import trial_frame
from harness.tracking.tracker import Tracker
from tests.helpers import tiny_study


def _with_a_paper_profile(folder: Path, tiny_bert: Path, name: str) -> Path:
    """The tests' tiny study (its profile: max_steps 4) with a paper profile of max_steps 8."""
    path = Path(tiny_study(folder, tiny_bert, {"lambda": [0.1]}, name=name))
    config = yaml.safe_load(path.read_text())
    config["profiles"]["paper"] = {"base": {"max_steps": 8}}
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_the_paper_setting_is_the_one_the_runs_were_made_against(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    path = _with_a_paper_profile(tmp_path, tiny_bert, "logged")
    study = load_study(str(path))
    run_study(study, progress=False)  # the tiny profile: max_steps 4

    path.unlink()  # the file gone after the study ran: the report needs none
    tracker = Tracker()
    frame, parent = trial_frame(tracker, "logged", None)
    plans = logged_paper_plans(tracker, parent.info.run_id, tmp_path / "download")
    assert plans is not None and plans.plans is not None and len(plans.plans) == 1
    assert plans.plans[0].params["max_steps"] == 8
    assert "max_steps 4 (paper: 8)" in paper_setting(plans, frame).differences
    assert set(plans.final_metrics()) == set(study.grid_runs()[0].plan.scoring.final_metrics)

    trial = frame.run_id.iloc[0]  # a trial's run: its own plan, no paper plans
    assert logged_paper_plans(tracker, trial, tmp_path / "none") is None
    logged = json.loads(tracker.download(trial, PLAN_ARTIFACT, tmp_path / "trial").read_text())
    assert logged == json.loads(study.grid_runs()[0].plan.to_json())
    assert logged["scoring"]["target"] == "STSBenchmark.spearman" and logged["metrics"]["objective"] is None
    assert logged["metrics"]["dev.STSBenchmark.spearman.best"] == "dev"


@pytest.mark.slow
def test_a_parent_from_before_the_plans_is_read_from_its_logged_study_yaml(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    path = _with_a_paper_profile(tmp_path, tiny_bert, "older")
    tracker = Tracker()
    experiment = tracker.experiment_id("older-parent")
    parent = tracker.open_parent(experiment, None, "older (tiny)", {"study": "older"})
    tracker.run(parent).log_text(path.read_text(), "study.yaml")  # what a parent logged before the plans
    path.unlink()
    plans = logged_paper_plans(tracker, parent, tmp_path / "download")
    assert plans is not None and plans.plans is not None and plans.plans[0].params["max_steps"] == 8
    with pytest.raises(Exception):  # noqa: B017 - the store has no such artifact
        tracker.download(parent, PAPER_PLANS_ARTIFACT, tmp_path / "none")
