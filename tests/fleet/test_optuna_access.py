"""harness.fleet.optuna_access: each reach past Optuna's public API still reaches what the harness relies on,
and Optuna still refuses to tell a trial another process has failed (how a woken worker learns it)."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from harness.fleet.optuna_access import (
    backend_of,
    heartbeat_backend,
    state_now,
    storage_of,
    study_id,
    trial_id,
)


def test_the_private_handles_are_the_studys_storage_and_ids(tmp_path: Path) -> None:
    rdb = RDBStorage(f"sqlite:///{tmp_path / 'optuna.db'}", heartbeat_interval=5, grace_period=15)
    study = optuna.create_study(study_name="access", storage=rdb)
    trial = study.ask()
    storage = storage_of(study)
    assert backend_of(storage) is rdb and backend_of(rdb) is rdb  # Optuna's cache wraps the RDBStorage
    assert study_id(study) == storage.get_study_id_from_name("access")
    assert storage.get_trial(trial_id(trial)).number == trial.number
    frozen = study.trials[0]
    assert trial_id(frozen) == trial_id(trial) and state_now(study, frozen) == TrialState.RUNNING
    assert backend_of(storage).get_heartbeat_interval() == 5  # the settings harness.fleet.recovery reads
    assert heartbeat_backend(storage) is rdb


def test_only_a_storage_given_a_heartbeat_interval_records_heartbeats(tmp_path: Path) -> None:
    without = RDBStorage(f"sqlite:///{tmp_path / 'plain.db'}")
    journal = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(tmp_path / "optuna.journal"))
    )
    assert heartbeat_backend(without) is None and heartbeat_backend(journal) is None
    assert heartbeat_backend(optuna.storages.InMemoryStorage()) is None


def test_telling_a_trial_another_process_failed_is_refused() -> None:
    study = optuna.create_study()
    trial = study.ask()
    storage_of(study).set_trial_state_values(trial_id(trial), TrialState.FAIL)  # the lost-trial recovery
    with pytest.raises(ValueError):
        study.tell(trial, 1.0)
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        trial.report(0.5, step=1)  # harness.study.runner turns this into TrialTakenOver
    assert state_now(study, trial) == TrialState.FAIL


def test_every_database_call_of_optunas_cache_is_retried() -> None:
    """harness.fleet.steady_storage retries the RDBStorage methods it names, private ones included (Optuna's
    cache calls `_get_trials`, `_create_new_trial`, ...): each still exists, and the cache calls no other
    method of its backend that reaches the database."""
    import inspect
    import re

    from optuna.storages import _cached_storage

    from harness.fleet.steady_storage import DATABASE_CALLS

    assert all(callable(getattr(RDBStorage, name, None)) for name in DATABASE_CALLS)
    called = set(re.findall(r"self\._backend\.(\w+)", inspect.getsource(_cached_storage)))
    settings = {"get_heartbeat_interval", "get_heartbeat_stale_trial_callback"}  # no database
    retried = {*DATABASE_CALLS, "record_heartbeat"}  # SteadyRDBStorage.record_heartbeat retries itself
    assert called - settings <= retried, called - settings - retried


@pytest.mark.parametrize("objective_raises", [True, False])
def test_how_optimize_ends_when_another_process_failed_the_trial(objective_raises: bool) -> None:
    """What harness.study.runner.worker_loop takes for "taken for lost": `optimize` raises ValueError (Optuna
    refuses to tell a failed trial) when the objective raised, and, when it returned a value, Optuna 5.0's
    `assert False` in `_run_trial` (nothing of the objective's to log); the trial stays FAIL."""
    study = optuna.create_study()

    def objective(trial: optuna.Trial) -> float:
        storage_of(study).set_trial_state_values(trial_id(trial), TrialState.FAIL)  # the recovery, meanwhile
        if objective_raises:
            raise RuntimeError("taken over")
        return 1.0

    with pytest.raises(ValueError if objective_raises else AssertionError):
        study.optimize(objective, n_trials=1, catch=(Exception,))
    assert study.trials[0].state == TrialState.FAIL
