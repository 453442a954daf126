"""harness.study.workers: the `--workers 0` coordinator waits for a trial queued again just as every trial
seemed ended (harness.fleet.recovery's handler queues a lost trial a moment after Optuna failed it)."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState, create_trial

from harness.resolve.study_spec import load_study
from harness.study import workers
from harness.tracking.tracker import Tracker
from tests.helpers import tiny_study


def test_a_trial_queued_again_as_all_seemed_ended_is_waited_for(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}))  # a grid of one point
    opt = optuna.create_study()
    lost = create_trial(state=TrialState.FAIL, system_attrs={"grid_id": 0})  # failed for lost, just now
    opt.add_trial(lost)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # what other processes do while the coordinator waits
        sleeps.append(seconds)
        if len(sleeps) == 1:  # the handler queues the lost trial again during the settle
            opt.enqueue_trial({}, skip_if_exists=False)
        elif len(sleeps) == 2:  # a worker takes it and ends it
            trial = opt.ask()
            opt.tell(trial, 0.5)

    monkeypatch.setattr(workers.time, "sleep", sleep)
    workers.watch_external_workers(study, opt, Tracker(f"sqlite:///{tmp_path / 'm.db'}"), progress=False)
    assert sleeps[0] == workers.REQUEUE_SETTLE and len(sleeps) >= 3  # looked again, waited, settled again
    assert [t.state for t in opt.trials] == [TrialState.FAIL, TrialState.COMPLETE]


def test_a_coordinator_without_running_workers_says_so_once(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trials to run and none running for IDLE_NOTICE seconds (no worker started, or all gone): one line
    that says what to start; then a worker comes and the coordinator ends as usual."""
    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}))  # a grid of one point
    opt = optuna.create_study()
    clock = [0.0]

    def sleep(seconds: float) -> None:  # time passes with nobody running the trial, then a worker comes
        clock[0] += seconds
        if clock[0] > 3 * workers.IDLE_NOTICE and not opt.trials:
            opt.add_trial(create_trial(state=TrialState.COMPLETE, value=0.5, system_attrs={"grid_id": 0}))

    monkeypatch.setattr(workers.time, "sleep", sleep)
    monkeypatch.setattr(workers.time, "monotonic", lambda: clock[0])
    workers.watch_external_workers(study, opt, Tracker(f"sqlite:///{tmp_path / 'm.db'}"), progress=False)
    said = capsys.readouterr()
    lines = [line for line in (said.out + said.err).splitlines() if line.startswith("waiting for workers")]
    assert len(lines) == 1, said
    assert "1 trial(s) to run and none running for 60 s" in lines[0]
    assert f"harness worker {study.path} --profile tiny --storage" in lines[0]  # its YAML is not in studies/
    assert [t.state for t in opt.trials] == [TrialState.COMPLETE]
