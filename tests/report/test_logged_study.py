"""The report reads MLflow alone (issue 44 item 5): the paper profile a report holds runs against comes
from the study YAML the parent run logged when the study started, so editing the study file afterwards
changes nothing in the report of those runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.report.build import logged_study_file
from harness.report.setting import paper_setting
from harness.spec.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.study_runs import trial_frame
from harness.tracking.tracker import Tracker
from tests.helpers import tiny_study


@pytest.mark.slow
def test_the_paper_setting_is_the_one_the_runs_were_made_against(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    path = Path(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="logged"))
    config = yaml.safe_load(path.read_text())
    config["profiles"]["paper"] = {"base": {"max_steps": 8}}
    path.write_text(yaml.safe_dump(config))
    run_study(load_study(str(path)), progress=False)  # the tiny profile: max_steps 4

    config["profiles"]["paper"] = {"base": {"max_steps": 99}}  # the file edited after the study ran
    path.write_text(yaml.safe_dump(config))
    tracker = Tracker()
    frame, parent = trial_frame(tracker, "logged", None)
    logged = logged_study_file(tracker, parent.info.run_id, tmp_path / "download")
    assert (
        logged is not None
        and yaml.safe_load(logged.read_text())["profiles"]["paper"]["base"]["max_steps"] == 8
    )
    assert "max_steps 4 (paper: 8)" in paper_setting(str(logged), frame).differences
    assert "max_steps 4 (paper: 99)" in paper_setting(str(path), frame).differences  # what the file says now
    assert logged_study_file(tracker, frame.run_id.iloc[0], tmp_path / "none") is None  # a trial run: no YAML
