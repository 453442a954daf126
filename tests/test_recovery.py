"""harness.recovery: a lost trial's MLflow run ends KILLED with the handler's reason, also when the
coordinator's stray-run sweep reached the run first (the moment between Optuna failing the trial and the
handler's requeue), on a real MLflow store and a real Optuna study."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from harness.recovery import (
    EXPERIMENT,
    MLFLOW_RUN,
    PARENT_RUN,
    STRAY,
    WORKER,
    StaleTrialHandler,
    close_stray_runs,
)  # fmt: skip
from harness.tracking import PARENT_TAG, Tracker


@pytest.mark.parametrize("recorded", [True, False], ids=["run-id-recorded", "found-by-tags"])
def test_the_handlers_reason_replaces_the_sweeps_guess(tmp_path: Path, recorded: bool) -> None:
    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = tracker.experiment_id("recovery")
    parent = tracker.client.create_run(experiment).info.run_id
    child = tracker.client.create_run(experiment, tags={PARENT_TAG: parent, "trial": "0"}).info.run_id
    opt = optuna.create_study()
    opt.set_user_attr(PARENT_RUN, parent)
    opt.set_user_attr(EXPERIMENT, experiment)
    trial = opt.ask()
    trial.set_user_attr(WORKER, "host:1")
    if recorded:
        trial.set_user_attr(MLFLOW_RUN, child)
    opt.tell(trial, state=optuna.trial.TrialState.FAIL)  # Optuna failed it: heartbeat gone

    assert close_stray_runs(opt, tracker) == 1  # the coordinator's sweep came first
    assert tracker.client.get_run(child).data.tags["error"] == STRAY
    StaleTrialHandler(tracker).requeue(opt, opt.trials[0], "no heartbeat for 3 s")

    run = tracker.client.get_run(child)
    assert run.info.status == "KILLED"
    assert run.data.tags["error"].startswith("worker host:1 lost (no heartbeat for 3 s); queued again")
    assert len(opt.trials) == 2  # queued again with the same parameters


def test_a_run_ended_for_another_reason_is_left_alone(tmp_path: Path) -> None:
    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = tracker.experiment_id("recovery")
    parent = tracker.client.create_run(experiment).info.run_id
    child = tracker.client.create_run(experiment, tags={PARENT_TAG: parent, "trial": "0"}).info.run_id
    tracker.client.set_tag(child, "error", "terminated by SIGTERM")
    tracker.finish(child, "KILLED")
    opt = optuna.create_study()
    opt.set_user_attr(PARENT_RUN, parent)
    opt.set_user_attr(EXPERIMENT, experiment)
    trial = opt.ask()
    trial.set_user_attr(MLFLOW_RUN, child)
    opt.tell(trial, state=optuna.trial.TrialState.FAIL)
    StaleTrialHandler(tracker).requeue(opt, opt.trials[0], "no heartbeat for 3 s")
    assert tracker.client.get_run(child).data.tags["error"] == "terminated by SIGTERM"
