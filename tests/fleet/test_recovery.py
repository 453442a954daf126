"""harness.fleet.recovery: a lost trial's MLflow run ends KILLED with the handler's reason, also when the
coordinator's stray-run sweep reached the run first (the moment between Optuna failing the trial and the
handler's requeue), on a real MLflow store and a real Optuna study."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import optuna
import pytest

from harness.fleet.recovery import (
    EXPERIMENT,
    MLFLOW_RUN,
    PARENT_RUN,
    STRAY,
    WORKER,
    StaleTrialHandler,
    close_stray_runs,
)  # fmt: skip
from harness.fleet.steady_storage import SteadyRDBStorage
from harness.tracking.tracker import PARENT_TAG, Tracker

if TYPE_CHECKING:
    from tests.launcher import Launched
    from tests.services import Postgres

T = TypeVar("T")


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
    trial.suggest_float("x", 0.0, 1.0)
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


@pytest.mark.slow
def test_a_trial_taken_for_lost_after_it_was_scored_is_dropped_and_run_again(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    """The worker scored its trial while the trial was taken for lost (a heartbeat gap, e.g. a database
    restart): it drops its result, runs the trial queued again, and ends the study normally (Optuna 5.0
    ends `optimize` in `assert False` when a successful objective's trial cannot be told; seen once in
    the database-restart fault test under load)."""
    proc, storage, release = _paused_study(tmp_path, tiny_bert, "taken", "trial_scored")
    tracker = Tracker()
    runs = _until(  # trial 0 scored (its final metrics logged: train/steps is one) and paused
        proc,
        lambda: tracker.client.search_runs(
            [e.experiment_id for e in tracker.client.search_experiments()], "metrics.`train/steps` > 0"
        ),
    )
    _take_for_lost_then_release(proc, tracker, storage, "taken.tiny", release)
    run = tracker.client.get_run(runs[0].info.run_id)
    assert run.info.status == "KILLED" and "lost (no heartbeat for 3 s)" in run.data.tags["error"]


@pytest.mark.slow
def test_a_trial_taken_for_lost_after_its_run_finished_is_withdrawn(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    """The trial is taken for lost after its MLflow run ended FINISHED and before Optuna was told its
    value: the lost-trial handler withdraws that run (KILLED, with the reason: bench/chaos.py found such
    runs left FINISHED where the worker never came back), so the study lists one finished run per
    configuration; the worker says its result is dropped and runs the queued trial. Seen in the
    database-restart fault test when the restart outlasted the grace period."""
    from harness.fleet.recovery import TAKEN_OVER, UNRECORDED
    from tests.helpers import child_runs

    proc, storage, release = _paused_study(tmp_path, tiny_bert, "withdrawn", "trial_finished")
    tracker = Tracker()
    _until(proc, lambda: tracker.experiment("withdrawn") and
           [r for r in child_runs("withdrawn") if r.info.status == "FINISHED"])  # fmt: skip
    _take_for_lost_then_release(proc, tracker, storage, "withdrawn.tiny", release)
    runs = {r.data.tags["trial"]: r for r in child_runs("withdrawn")}
    assert runs["0"].info.status == "KILLED" and runs["0"].data.tags["error"].endswith(UNRECORDED)
    assert runs["1"].info.status == "FINISHED"
    assert TAKEN_OVER  # the worker's own reason, where it withdraws first


def _take_for_lost_then_release(
    proc: Launched, tracker: Tracker, storage: str, study: str, release: Path
) -> None:
    """Fail the paused worker's only trial and queue it again, as the lost-trial handler does, then let the
    worker go on: it drops its result, runs the queued trial and ends the study normally."""
    from optuna.trial import TrialState

    from harness.fleet.optuna_access import storage_of, trial_id

    opt = optuna.load_study(study_name=study, storage=storage)
    (lost,) = opt.trials
    storage_of(opt).set_trial_state_values(trial_id(lost), TrialState.FAIL)  # as fail_stale_trials does
    StaleTrialHandler(tracker).requeue(opt, opt.trials[0], "no heartbeat for 3 s")
    release.touch()
    proc.wait(timeout=180)
    said = proc.output()
    assert proc.returncode == 0, said
    assert "trial 0: its trial was taken for lost" in said and "result is dropped" in said
    assert "Traceback" not in said and "Should not reach" not in said
    first, again = optuna.load_study(study_name=study, storage=storage).trials
    assert (first.state, again.state) == (TrialState.FAIL, TrialState.COMPLETE)
    assert again.params == first.params


def _paused_study(tmp_path: Path, tiny_bert: Path, name: str, point: str) -> tuple[Launched, str, Path]:
    """A one-trial study run in a process of its own on a heartbeat storage (1 s), its trial held at the
    pause `point` (up to 120 s) until the test creates the returned release file."""
    from tests.helpers import tiny_study
    from tests.launcher import launch

    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name=name)
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    args = ["run-study", study, "--storage", storage, "--heartbeat", "1", "--no-progress"]
    release = tmp_path / "release"
    env = {"HARNESS_PAUSE_AT": f"{point}=120", "HARNESS_PAUSE_RELEASE": str(release)}
    return launch(args, tmp_path / "run.log", env), storage, release


def _until(proc: Launched, found: Callable[[], T]) -> T:
    """`found()` once it is truthy, polled while the process runs (at most 180 s)."""
    deadline = time.monotonic() + 180
    while not (value := found()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.output()
        time.sleep(0.2)
    return value


def test_a_finished_run_of_a_trial_lost_before_its_end_was_told_is_withdrawn(tmp_path: Path) -> None:
    """bench/chaos.py's finding: a worker SIGTERMed (or killed) between its run ending FINISHED and Optuna
    recording the value never comes back to withdraw it; the handler that queues the trial again does, so
    no FINISHED run stands for a trial that is not COMPLETE."""
    from harness.fleet.recovery import UNRECORDED

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = tracker.experiment_id("recovery")
    parent = tracker.client.create_run(experiment).info.run_id
    child = tracker.client.create_run(experiment, tags={PARENT_TAG: parent, "trial": "0"}).info.run_id
    tracker.finish(child, "FINISHED")
    opt = optuna.create_study()
    opt.set_user_attr(PARENT_RUN, parent)
    opt.set_user_attr(EXPERIMENT, experiment)
    trial = opt.ask()
    trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr(WORKER, "host:1")
    trial.set_user_attr(MLFLOW_RUN, child)
    opt.tell(trial, state=optuna.trial.TrialState.FAIL)  # its worker went silent while telling
    StaleTrialHandler(tracker).requeue(opt, opt.trials[0], "no heartbeat for 3 s")
    run = tracker.client.get_run(child)
    assert run.info.status == "KILLED" and run.data.tags["error"].endswith(UNRECORDED)
    assert run.data.tags["error"].startswith("worker host:1 lost (no heartbeat for 3 s); queued again")


@pytest.mark.slow
def test_a_sigterm_after_the_objective_waits_until_optuna_has_the_value(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    """bench/chaos.py's finding: a SIGTERM between a trial's run ending FINISHED and Optuna recording its
    value left the trial RUNNING (then lost and run again) beside a FINISHED run. Now the signal is held
    there: the value is recorded, then the process stops as terminated."""
    import signal

    from harness.fleet.signals import TERMINATED_EXIT
    from tests.helpers import child_runs

    proc, storage, release = _paused_study(tmp_path, tiny_bert, "valued", "trial_valued")
    tracker = Tracker()
    _until(proc, lambda: tracker.experiment("valued") and
           [r for r in child_runs("valued") if r.info.status == "FINISHED"])  # fmt: skip
    time.sleep(3.0)  # past the run's end: at the pause, the signals held
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    release.touch()
    assert proc.wait(timeout=120) == TERMINATED_EXIT, proc.output()
    (trial,) = optuna.load_study(study_name="valued.tiny", storage=storage).trials
    assert trial.state == optuna.trial.TrialState.COMPLETE
    assert [r.info.status for r in child_runs("valued")] == ["FINISHED"]


def test_a_silent_trial_that_never_drew_its_point_is_failed_not_queued_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/chaos.py's finding: at the end of a busy grid a worker spent longer than the silence limit in
    the grid sampler, its new trial had no parameters yet, and another worker failed it and queued a copy:
    a copy with no parameters, failed and copied in turn, until the retries ran out and trials were left
    RUNNING with no worker. Such a trial is failed and not queued again (its point was never taken); a
    silent trial with parameters still is."""
    from datetime import datetime, timedelta

    from harness.fleet import recovery
    from harness.fleet.optuna_access import storage_of, trial_id

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat_interval=1)
    opt = optuna.create_study(storage=storage)
    empty = opt.ask()  # created, no parameters drawn yet, no worker recorded
    drawn = opt.ask()
    drawn.suggest_float("x", 0.0, 1.0)  # its point drawn; its worker died before its first heartbeat
    later = datetime.now() + timedelta(seconds=60)  # both silent past the limit
    monkeypatch.setattr(recovery, "datetime", type("Later", (), {"now": staticmethod(lambda: later)}))
    monkeypatch.setattr(recovery.time, "sleep", lambda seconds: None)
    recovery.wait_for_others(opt, tracker)
    states = {t.number: t.state.name for t in opt.get_trials(deepcopy=False)}
    assert states[empty.number] == "FAIL" and states[drawn.number] == "FAIL"
    waiting = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert [t.params for t in waiting] == [{"x": drawn.params["x"]}]  # only the trial with a point again
    assert storage_of(opt).get_trial(trial_id(empty)).params == {}


def _lost_trial(opt: optuna.Study, interrupted: bool = False) -> optuna.trial.FrozenTrial:
    """A trial of `opt` with a point drawn, ended FAIL as its worker's stop or loss leaves it."""
    trial = opt.ask()
    trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr(WORKER, "host:1")
    if interrupted:
        trial.set_user_attr("interrupted", True)
    return opt.tell(trial, state=optuna.trial.TrialState.FAIL)


def test_a_lost_trial_is_queued_again_once_however_many_processes_queue_it(postgres: Postgres) -> None:
    """The stopped worker, a waiting worker's sweep and a restarted coordinator may all queue the same
    stopped trial; eight processes' storages doing it at once make one copy (the creation id names the lost
    trial, looked up under the study row's lock)."""
    from harness.fleet.recovery import queue_again

    name = f"once_{os.getpid()}"
    postgres.execute(f"CREATE DATABASE {name}")
    url = postgres.url(name)
    opt = optuna.create_study(storage=SteadyRDBStorage(url, 1, 3), study_name="s")
    lost = _lost_trial(opt, interrupted=True)
    studies = [optuna.load_study(study_name="s", storage=SteadyRDBStorage(url, 1, 3)) for _ in range(8)]
    start = threading.Barrier(len(studies))

    def queue(study: optuna.Study) -> bool:
        start.wait()
        return queue_again(study, lost, "stopped")

    with ThreadPoolExecutor(len(studies)) as pool:
        assert all(pool.map(queue, studies))
    waiting = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert [(t.params, t.system_attrs["retry_history"]) for t in waiting] == [(lost.params, [lost.number])]
    assert "interrupted" not in waiting[0].user_attrs  # the copy's own end decides whether it was stopped


def test_a_stopped_trial_its_worker_did_not_queue_is_queued_by_a_waiting_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bench/chaos.py's finding: a worker SIGTERMed and then SIGKILLed at once (preemption without grace)
    ended its trial FAIL and interrupted, but died before queueing it again: the grid point counted as
    visited and was never run. A waiting worker queues it a grace period after it ended, once; the stopped
    worker's late queueing adds no second copy."""
    from datetime import datetime, timedelta

    from harness.fleet import recovery

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    storage = SteadyRDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat=1, grace=3)
    opt = optuna.create_study(storage=storage)
    lost = _lost_trial(opt, interrupted=True)
    monkeypatch.setattr(recovery.time, "sleep", lambda seconds: None)
    assert recovery.others_pending(opt)  # workers stay for it
    recovery.wait_for_others(opt, tracker)
    assert not opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))  # its worker's turn
    later = datetime.now() + timedelta(seconds=4)  # past the grace period
    monkeypatch.setattr(recovery, "datetime", type("Later", (), {"now": staticmethod(lambda: later)}))
    recovery.wait_for_others(opt, tracker)
    recovery.wait_for_others(opt, tracker)
    assert recovery.requeue_interrupted(opt, tracker, "host:1", "terminated by SIGTERM") == 0  # queued
    waiting = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert [t.params for t in waiting] == [lost.params]
    assert waiting[0].user_attrs["requeued_because"].startswith("worker host:1 lost (stopped, and not queued")
    assert not recovery.others_pending(opt)  # nothing left to wait for: the copy is a trial to run


def test_a_silent_grid_trial_with_its_point_assigned_but_not_drawn_is_queued_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grid trial holds its point from the sampler's assignment (`grid_id`), before the objective draws
    the value: lost then, it is queued again, or the point, counted as visited, would never run."""
    from datetime import datetime, timedelta

    from harness.fleet import recovery

    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat_interval=1)
    opt = optuna.create_study(storage=storage, sampler=optuna.samplers.GridSampler({"x": [0.0, 1.0]}))
    assigned = opt.ask()  # its point assigned, no value drawn; its worker died before its first beat
    later = datetime.now() + timedelta(seconds=60)
    monkeypatch.setattr(recovery, "datetime", type("Later", (), {"now": staticmethod(lambda: later)}))
    monkeypatch.setattr(recovery.time, "sleep", lambda seconds: None)
    recovery.wait_for_others(opt, tracker)
    (copy,) = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert copy.system_attrs["grid_id"] == opt.trials[assigned.number].system_attrs["grid_id"]


def test_a_restarted_study_queues_a_stopped_trial_as_the_workers_would(tmp_path: Path) -> None:
    """On a heartbeat storage the coordinator's resume queues a stopped trial the workers' way, so that a
    waiting worker's sweep of the same trial finds it queued (one copy between them)."""
    from harness.fleet import recovery
    from harness.study.optuna_study import prepare_resume

    storage = SteadyRDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat=1, grace=3)
    opt = optuna.create_study(storage=storage)
    lost = _lost_trial(opt, interrupted=True)
    assert prepare_resume(opt, storage, local=False) == 1
    assert recovery.queue_again(opt, lost, "stopped")  # a waiting worker's sweep, a moment later
    waiting = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert [t.system_attrs["retry_history"] for t in waiting] == [[lost.number]]
    assert not recovery.stranded(opt.get_trials(deepcopy=False))
