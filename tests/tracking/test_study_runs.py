"""A study's runs read back (harness.tracking.study_runs): asking for a profile the store has no runs of
names the profiles it has (issue 58 item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.tracking.study_runs import latest_parent
from harness.tracking.tracker import Tracker


def test_a_profile_without_runs_names_the_profiles_with_runs(harness_home: Path) -> None:
    tracker = Tracker()
    experiment = tracker.experiment_id("mine")
    for profile in ("smoke", "tiny"):
        parent = tracker.open_parent(experiment, None, f"mine ({profile})", {"profile": profile})
        tracker.run(parent).set_tag("harness.role", "study")
    assert latest_parent(tracker, "mine", "tiny").data.tags["profile"] == "tiny"
    with pytest.raises(HarnessError) as refused:
        latest_parent(tracker, "mine", "paper")
    assert str(refused.value) == (
        "experiment 'mine' has no study run for profile paper; its runs are of profile smoke, tiny: "
        "`harness report mine --profile smoke` or `harness report mine --profile tiny`"
    )
