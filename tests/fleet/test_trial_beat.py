"""harness.fleet.trial_beat: a trial beats from its creation until it ends, so that a worker slow inside
`ask` (a sampler reading every trial of a busy study) is not taken for lost; on real RDB storages."""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import TrialState

from harness.fleet import recovery
from harness.fleet.optuna_access import backend_of, rdb_session, storage_of, trial_id
from harness.fleet.steady_storage import SteadyRDBStorage
from harness.tracking.tracker import Tracker

warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used with Study.optimize")


def last_beat(storage: Any, trial: Any) -> Any:
    from optuna.storages._rdb import models

    with rdb_session(backend_of(storage)) as session:
        row = session.query(models.TrialHeartbeatModel).filter_by(trial_id=trial_id(trial)).one_or_none()
        return row.heartbeat if row is not None else None


def test_a_trial_beats_from_its_creation_until_its_end_is_written(tmp_path: Path) -> None:
    storage = SteadyRDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat=1, grace=3)
    opt = optuna.create_study(storage=storage)
    trial = opt.ask()  # no objective runs, so Optuna's own heartbeat thread never starts
    time.sleep(0.3)
    first = last_beat(storage_of(opt), trial)
    assert first is not None  # beating from its creation
    time.sleep(1.5)
    assert last_beat(storage_of(opt), trial) > first
    opt.tell(trial, 1.0)
    ended = last_beat(storage_of(opt), trial)
    time.sleep(1.5)
    assert last_beat(storage_of(opt), trial) == ended  # no beats once it ended
    assert storage.beat.held is None


class SlowGrid(optuna.samplers.GridSampler):
    """A grid sampler that takes `seconds` to assign a point, as Optuna's does past the grid's size on a
    busy database (it reads every trial of the study)."""

    def __init__(self, seconds: float) -> None:
        super().__init__({"x": [0.0, 1.0]}, seed=0)
        self.seconds = seconds

    def before_trial(self, study: optuna.Study, trial: Any) -> None:
        time.sleep(self.seconds)
        super().before_trial(study, trial)


def test_a_worker_slow_in_the_sampler_is_not_taken_for_lost(tmp_path: Path) -> None:
    """bench/chaos.py's finding, alone: 16 workers at the end of a 960-point grid spent longer in the grid
    sampler than twice the silence limit; the waiting workers failed their new trials as silent, again and
    again, until none ran. Here one worker's sampler takes 7 s (the limit: 2 x 3 s at heartbeat 1) while
    another worker waits for it: its trial completes, and nothing is failed."""
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    worker = optuna.create_study(storage=SteadyRDBStorage(url, 1, 3), sampler=SlowGrid(7.0), study_name="s")
    waiter = optuna.load_study(study_name="s", storage=SteadyRDBStorage(url, 1, 3))
    recovery.watch(storage_of(waiter), tracker)
    slow = threading.Thread(target=worker.optimize, args=(lambda t: t.suggest_float("x", 0.0, 1.0), 1))
    slow.start()
    while slow.is_alive():
        recovery.wait_for_others(waiter, tracker)
    states = [t.state for t in waiter.get_trials(deepcopy=False)]
    assert states == [TrialState.COMPLETE]
