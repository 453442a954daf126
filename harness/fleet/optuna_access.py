"""The few places the harness reaches past Optuna's public API, each named here with its reason, so that an
Optuna release that changes one fails tests/fleet/test_optuna_access.py rather than a running study.

- `storage_of(study)` is `Study._storage`: the coordinator lease (a study attr written and read back), the
  grid sampler's taken-point check, the lost-trial recovery (failing another process's RUNNING trial) and
  the heartbeat settings all need the storage itself, and Optuna gives no public handle to it.
- `trial_id(trial)` is `Trial._trial_id` / `FrozenTrial._trial_id`, and `study_id(study)` is
  `Study._study_id`: the storage's calls take these ids, not the trial number or the study name.
- `backend_of(storage)` is `_CachedStorage._backend`: Optuna wraps an RDBStorage in a cache, and the
  heartbeat interval and stale-trial callback live on the wrapped storage.
- `heartbeat_backend(storage)` uses `optuna.storages._heartbeat` (BaseHeartbeat, is_heartbeat_enabled):
  whether a storage records heartbeats, which Optuna decides with these and exports no public test for.
- harness.fleet.steady_storage subclasses RDBStorage and retries its database methods by name, private ones
  included (`_get_trials`, `_create_new_trial`, ...: what Optuna's cache calls); the test checks the list.
- harness.fleet.once_writes' ids: SteadyRDBStorage overrides `_create_new_trial` and the hook it calls inside
  the creation transaction (`_get_prepared_new_trial`), and writes `set_trial_state_values` itself with
  Optuna's session helper (`_create_scoped_session`), ORM models (`optuna.storages._rdb.models`) and
  `_set_trial_value_without_commit` / `_set_trial_attr_without_commit`; tests/fleet/test_once_writes.py
  checks that the rewrite answers as Optuna's does.
"""

from __future__ import annotations

import optuna
from optuna.storages import BaseStorage
from optuna.storages._heartbeat import BaseHeartbeat, is_heartbeat_enabled
from optuna.trial import FrozenTrial, TrialState


def storage_of(study: optuna.Study) -> BaseStorage:
    return study._storage


def study_id(study: optuna.Study) -> int:
    return study._study_id


def trial_id(trial: optuna.Trial | FrozenTrial) -> int:
    return trial._trial_id


def backend_of(storage: object) -> object:
    """The storage Optuna's cache wraps (an RDBStorage), or `storage` itself."""
    return getattr(storage, "_backend", storage)


def state_now(study: optuna.Study, trial: optuna.Trial | FrozenTrial) -> TrialState:
    """The trial's state in the storage now (another process may have ended it)."""
    return storage_of(study).get_trial(trial_id(trial)).state


def heartbeat_backend(storage: object) -> BaseHeartbeat | None:
    """The storage Optuna records heartbeats in (an RDBStorage given a heartbeat interval), else None."""
    backend = backend_of(storage)
    return backend if isinstance(backend, BaseHeartbeat) and is_heartbeat_enabled(backend) else None
