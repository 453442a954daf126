"""The fault layer around a trial (harness.fleet.trial_ending), on a real MLflow store: however the trial
ends, its run ends FINISHED, FAILED or KILLED with the reason, never RUNNING; and what ended it is put on
its Optuna trial."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from harness.errors import ServiceUnavailable, TrialSkipped
from harness.fleet.recovery import INTERRUPTED, TAKEN_OVER, TrialTakenOver
from harness.fleet.signals import Terminated
from harness.fleet.trial_ending import run_ends_with_the_trial, told_to_the_study
from harness.tracking.tracker import LoggedRun, Tracker
from tests.busy_mlflow import busy_proxy, mlflow_server


def _run(tracker: Tracker) -> LoggedRun:
    experiment = tracker.experiment_id("ending")
    parent = tracker.open_parent(experiment, None, "study (tiny)", {})
    return tracker.start_child(experiment, parent, "trial 0", {})


ENDINGS = [
    (KeyboardInterrupt(), "KILLED", "interrupted (Ctrl-C); re-run the study to run this trial again"),
    (Terminated(), "KILLED", "terminated by SIGTERM; re-run the study to run this trial again"),
    (ServiceUnavailable("Optuna database gone", "database"), "KILLED", "stopped: Optuna database gone"),
    (
        TrialSkipped("no GloVe vectors: give glove_path"),
        "KILLED",
        "skipped: no GloVe vectors: give glove_path",
    ),
    (optuna.TrialPruned("pruned at step 4 (dev score 0.5)"), "KILLED", "pruned at step 4 (dev score 0.5)"),
    (TrialTakenOver(TAKEN_OVER), "KILLED", TAKEN_OVER),
    (ValueError("bad value\nsecond line"), "FAILED", "ValueError: bad value"),
]


@pytest.mark.parametrize(
    ("raised", "status", "error"), ENDINGS, ids=[type(e).__name__ for e, _, _ in ENDINGS]
)
def test_the_run_ends_as_the_trial_does(
    harness_home: Path, tmp_path: Path, raised: BaseException, status: str, error: str
) -> None:
    tracker = Tracker()
    run = _run(tracker)
    with pytest.raises(type(raised)), run_ends_with_the_trial(run, still_ours=lambda: True):
        raise raised
    ended = tracker.get_run(run.run_id)
    assert (ended.info.status, ended.data.tags.get("error")) == (status, error)
    if status == "FAILED":  # a failure keeps its traceback
        assert "ValueError: bad value" in tracker.download(run.run_id, "error.txt", tmp_path).read_text()


def test_a_trial_that_ends_well_is_finished_unless_another_process_took_it(harness_home: Path) -> None:
    tracker = Tracker()
    run = _run(tracker)
    with run_ends_with_the_trial(run, still_ours=lambda: True):
        pass
    assert tracker.get_run(run.run_id).info.status == "FINISHED"
    taken = _run(tracker)
    with pytest.raises(TrialTakenOver), run_ends_with_the_trial(taken, still_ours=lambda: False):
        pass
    ended = tracker.get_run(taken.run_id)
    assert (ended.info.status, ended.data.tags["error"]) == ("KILLED", TAKEN_OVER)


@pytest.mark.parametrize("raised", [None, ValueError("bad value"), optuna.TrialPruned("pruned at step 4")])
def test_a_run_that_cannot_be_ended_for_a_busy_server_is_an_outage_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException | None
) -> None:
    """bench/chaos.py's finding (64 workers, seed 1): the tracking server's database stayed busy past the
    retry window while a trial's run was being ended FINISHED; the busy answer went on as the trial's own
    error, the trial counted failed and its grid point was lost. Now it is an outage (the trial goes back
    to the queue), whether the trial ended well, failed or was pruned; a real server behind a proxy that
    answers every run update busy."""
    monkeypatch.setenv("HARNESS_TRACKING_RETRY_SECONDS", "1")
    with mlflow_server(tmp_path) as server, busy_proxy(server, busy=100, path="/runs/update") as proxy:
        run = _run(Tracker(proxy.uri))
        busy = pytest.raises(ServiceUnavailable, match="QueuePool limit")
        with busy as stopped, run_ends_with_the_trial(run, still_ours=lambda: True):
            if raised is not None:
                raise raised
        assert stopped.value.service == "tracking" and proxy.calls > 1
        assert Tracker(server).get_run(run.run_id).info.status == "RUNNING"  # the stray-run sweep's to end
        with (
            pytest.raises(KeyboardInterrupt),
            run_ends_with_the_trial(_run(Tracker(proxy.uri)), lambda: True),
        ):
            raise KeyboardInterrupt  # a stop stays a stop


def test_what_ended_a_trial_is_put_on_its_optuna_trial(tmp_path: Path) -> None:
    study = optuna.create_study()
    said: list[str] = []
    for raised in (KeyboardInterrupt(), TrialSkipped("no vectors"), RuntimeError("boom")):
        trial = study.ask()
        with pytest.raises(type(raised)), told_to_the_study(trial, said.append):
            raise raised
        attrs = study.trials[-1].user_attrs  # read back from the storage
        expected = {
            KeyboardInterrupt: {INTERRUPTED: True},
            TrialSkipped: {"skipped": "no vectors"},
            RuntimeError: {"error": "RuntimeError: boom"},
        }[type(raised)]
        assert attrs == expected
    assert said == ["trial 1 skipped: no vectors", "trial 2 failed: RuntimeError: boom"]


def test_a_trial_taken_before_it_started_ends_the_attempt_without_a_traceback(tmp_path: Path) -> None:
    """bench/chaos.py's finding: a worker slow between creating its trial and the grid sampler's first
    write (a database restart, a network cut) found the trial already failed by another worker
    (harness.fleet.recovery.wait_for_others) and died with UpdateFinishedTrialError. Now that attempt ends
    with one line; the objective never ran, the other worker's re-run covers the point."""
    from harness.fleet.optuna_access import storage_of, trial_id
    from harness.fleet.trial_ending import optimize_one
    from harness.study.optuna_study import ResumableGridSampler

    class TakenMeanwhile(ResumableGridSampler):
        def before_trial(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> None:
            storage_of(study).set_trial_state_values(trial_id(trial), optuna.trial.TrialState.FAIL)
            super().before_trial(study, trial)  # its first write, refused: the trial has ended

    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}")
    opt = optuna.create_study(storage=storage, sampler=TakenMeanwhile({"x": [1, 2]}, seed=0))
    ran, said = [], []
    optimize_one(opt, lambda trial: ran.append(trial) or 1.0, Tracker(), said.append)
    assert not ran and said == ["the trial this worker had just created was taken for lost by another before "
                                "it started; its point runs again there"]  # fmt: skip
    assert [t.state.name for t in opt.trials] == ["FAIL"]


def test_a_stop_before_the_run_marks_the_trial_so_it_is_queued_again_not_failed(tmp_path: Path) -> None:
    """bench/chaos.py's finding (64 workers, seed 1): a SIGTERM landed after the objective had begun and
    before its run started; the trial ended FAIL with no reason, was not queued again, its grid point was
    lost and the study counted a failure (its coordinator then ended in error, again and again). A stop
    anywhere in the objective marks the trial interrupted: its worker queues it again."""
    from harness.fleet.recovery import WORKER, requeue_interrupted
    from harness.fleet.steady_storage import SteadyRDBStorage
    from harness.fleet.trial_ending import marked_if_stopped
    from harness.study.optuna_study import ResumableGridSampler, failed_trials

    storage = SteadyRDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat=1, grace=3)
    grid = ResumableGridSampler({"x": [0.1, 0.2]}, seed=0)
    opt = optuna.create_study(storage=storage, sampler=grid)

    def objective(trial: optuna.Trial) -> float:
        with marked_if_stopped(trial):
            trial.set_user_attr(WORKER, "host:1")
            raise Terminated("terminated by SIGTERM")  # before any parameter was drawn

    with pytest.raises(KeyboardInterrupt):
        opt.optimize(objective, n_trials=1)
    (stopped,) = opt.get_trials(deepcopy=False)
    assert stopped.state.name == "FAIL" and stopped.user_attrs[INTERRUPTED]
    assert "grid_id" in stopped.system_attrs  # its point was taken
    assert requeue_interrupted(opt, Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}"), "host:1", "SIGTERM") == 1
    (copy,) = opt.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
    assert copy.system_attrs["grid_id"] == stopped.system_attrs["grid_id"]
    assert failed_trials(opt) == ([], [])
    created = storage.create_new_trial(opt._study_id)  # its worker lost before the sampler gave it a point
    storage.set_trial_state_values(created, optuna.trial.TrialState.FAIL)  # failed as silent
    assert failed_trials(opt) == ([], [])  # not a failure: its point was never taken
