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
- `running_unbeaten(storage, study_id)` reads Optuna's heartbeat table (`models.TrialHeartbeatModel`):
  Optuna's stale-trial check skips a RUNNING trial that never beat, and the lost-trial recovery must find
  those (a worker killed between creating its trial and its first beat).
- `claim_grid_point` writes a grid trial's point (`grid_id`, the system attr Optuna's GridSampler reads)
  in a transaction that locks the study's row, as Optuna's trial creation does; on a journal file,
  `claim_grid_point_here` finds the file at `JournalStorage._backend._file_path`;
  harness.study.optuna_study.ResumableGridSampler reads GridSampler's `_n_min_trials` (the grid's size) to
  call it.
- harness.fleet.steady_storage subclasses RDBStorage and retries its database methods by name, private ones
  included (`_get_trials`, `_create_new_trial`, ...: what Optuna's cache calls); the test checks the list.
- harness.fleet.once_writes' ids: SteadyRDBStorage overrides `_create_new_trial` and the hook it calls inside
  the creation transaction (`_get_prepared_new_trial`), and writes `set_trial_state_values` itself with
  the helpers below: Optuna's transaction scope (`_create_scoped_session`), its ORM models
  (`optuna.storages._rdb.models`) and `_set_trial_value_without_commit` / `_set_trial_attr_without_commit`;
  tests/fleet/test_once_writes.py checks that the rewrite answers as Optuna's does.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import optuna
from optuna.storages import BaseStorage, RDBStorage
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


def is_rdb(storage: object) -> bool:
    """Whether `storage` is (Optuna's cache around) an RDBStorage: a database with row locks."""
    return isinstance(backend_of(storage), RDBStorage)


def heartbeat_backend(storage: object) -> BaseHeartbeat | None:
    """The storage Optuna records heartbeats in (an RDBStorage given a heartbeat interval), else None."""
    backend = backend_of(storage)
    if not isinstance(backend, BaseHeartbeat):
        return None
    # Optuna's heartbeat backend (RDBStorage) is a BaseStorage too, which the isinstance above cannot say
    return backend if is_heartbeat_enabled(cast(BaseStorage, backend)) else None


# harness.fleet.once_writes' ids, in the transactions of SteadyRDBStorage's own writes: SQLAlchemy's ORM
# (optuna.storages._rdb) is imported when a database is used, not with this module


@contextmanager
def rdb_session(storage: RDBStorage) -> Iterator[Any]:
    """Optuna's transaction scope (`_create_scoped_session`): committed at the end, rolled back on an
    error (a SQLAlchemy error raised as StorageInternalError)."""
    from optuna.storages._rdb.storage import _create_scoped_session

    with _create_scoped_session(storage.scoped_session) as session:
        yield session


def locked_trial(session: Any, trial_id: int) -> Any:
    """The trial's row (a TrialModel), locked for this transaction (SELECT ... FOR UPDATE)."""
    from optuna.storages._rdb import models

    return models.TrialModel.find_or_raise_by_id(trial_id, session, for_update=True)


def trial_with_system_attr(session: Any, study_id: int, key: str, value: Any) -> Any:
    """The study's trial (a TrialModel) whose system attribute `key` is `value`, or None."""
    from optuna.storages._rdb import models

    attribute = models.TrialSystemAttributeModel
    return (
        session.query(models.TrialModel)
        .join(attribute, attribute.trial_id == models.TrialModel.trial_id)
        .filter(models.TrialModel.study_id == study_id)
        .filter(attribute.key == key, attribute.value_json == json.dumps(value))
        .one_or_none()
    )


def trial_system_attr(session: Any, trial_id: int, key: str) -> Any:
    """A trial's system attribute as stored now, or None."""
    from optuna.storages._rdb import models

    attribute = models.TrialSystemAttributeModel
    found = (
        session.query(attribute).filter(attribute.trial_id == trial_id, attribute.key == key).one_or_none()
    )
    return json.loads(found.value_json) if found is not None else None


def set_trial_system_attr_in(storage: RDBStorage, session: Any, trial_id: int, key: str, value: Any) -> None:
    """Write a trial system attribute inside `session`'s transaction (Optuna's upsert, uncommitted)."""
    from optuna.storages._rdb import models

    storage._set_trial_attr_without_commit(session, models.TrialSystemAttributeModel, trial_id, key, value)


def set_trial_values_in(storage: RDBStorage, session: Any, trial: Any, values: Any) -> None:
    """Write a trial's objective values inside `session`'s transaction (uncommitted)."""
    for objective, value in enumerate(values or ()):
        storage._set_trial_value_without_commit(session, trial, objective, value)


def running_unbeaten(storage: object, study_id: int) -> set[int] | None:
    """Ids of the study's RUNNING trials with no heartbeat recorded; None for a storage without heartbeats."""
    if heartbeat_backend(storage) is None:
        return None
    from optuna.storages._rdb import models

    backend = cast(RDBStorage, backend_of(storage))

    def query() -> set[int]:
        with rdb_session(backend) as session:
            beaten = session.query(models.TrialHeartbeatModel.trial_id)
            rows = (
                session.query(models.TrialModel.trial_id)
                .filter(models.TrialModel.study_id == study_id, models.TrialModel.state == TrialState.RUNNING)
                .filter(models.TrialModel.trial_id.not_in(beaten))
                .all()
            )
        return {row[0] for row in rows}

    retry = getattr(backend, "retry", None)  # SteadyRDBStorage's: rides out a database restart
    return retry(query) if retry is not None else query()


def claim_grid_point(storage: object, study_id: int, trial_id: int, points: int, yielded: str) -> int | None:
    """Give trial `trial_id` the lowest grid point (0 .. `points` - 1) no other trial of the study holds,
    and return it; None, writing nothing, when every point is held. Claims are made one at a time, under
    the lock of the study's row (SELECT ... FOR UPDATE, as Optuna's trial creation takes it), so no two
    trials get one point. A point is held by a trial with that `grid_id` that did not yield (system attr
    `yielded`), whatever its state (a lost trial's copy runs it, a failed one used it), and by a trial
    numbered below `points` that is about to take it (Optuna's GridSampler gives trial n point n): RUNNING
    or WAITING, with no `grid_id` or given parameters yet. A retry whose earlier attempt committed finds
    its point written and returns it."""
    from optuna.storages._rdb import models

    backend = cast(RDBStorage, backend_of(storage))

    def claim() -> int | None:
        with rdb_session(backend) as session:
            models.StudyModel.find_or_raise_by_id(study_id, session, for_update=True)
            attribute = models.TrialSystemAttributeModel
            rows = (
                session.query(models.TrialModel.trial_id, models.TrialModel.number, models.TrialModel.state,
                              attribute.key, attribute.value_json)
                .outerjoin(attribute, (attribute.trial_id == models.TrialModel.trial_id)
                           & attribute.key.in_(("grid_id", "fixed_params", yielded)))
                .filter(models.TrialModel.study_id == study_id)
                .all()
            )  # fmt: skip
            attrs: dict[int, dict[str, Any]] = {}
            about: dict[int, tuple[int, TrialState]] = {}
            for tid, number, state, key, value in rows:
                about[tid] = (number, state)
                attrs.setdefault(tid, {})
                if key is not None:
                    attrs[tid][key] = json.loads(value)
            if "grid_id" in attrs.get(trial_id, {}):
                return int(attrs[trial_id]["grid_id"])
            trials = [(tid, number, state, attrs[tid]) for tid, (number, state) in about.items()]
            free = free_grid_point(trials, trial_id, points, yielded)
            if free is not None:
                set_trial_system_attr_in(backend, session, trial_id, "grid_id", free)
            return free

    retry = getattr(backend, "retry", None)
    return retry(claim) if retry is not None else claim()


_ABOUT_TO_TAKE = (TrialState.RUNNING, TrialState.WAITING)


def free_grid_point(
    trials: list[tuple[int, int, TrialState, dict[str, Any]]], trial_id: int, points: int, yielded: str
) -> int | None:
    """The lowest grid point no trial but `trial_id` holds, of `trials` given as (trial id, number, state,
    system attrs); None when every point is held (the rule: claim_grid_point's docstring)."""
    held = set()
    for tid, number, state, attrs in trials:
        if tid == trial_id or attrs.get(yielded):
            continue
        if "grid_id" in attrs:
            held.add(int(attrs["grid_id"]))
        elif "fixed_params" not in attrs and number < points and state in _ABOUT_TO_TAKE:
            held.add(number)
    return next((point for point in range(points) if point not in held), None)


def journal_file(storage: object) -> str | None:
    """The file of a JournalStorage on a journal file (`JournalStorage._backend._file_path`), else None."""
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    backend = getattr(storage, "_backend", None) if isinstance(storage, JournalStorage) else None
    return str(backend._file_path) if isinstance(backend, JournalFileBackend) else None


def claim_grid_point_here(
    storage: BaseStorage, study: int, trial: int, points: int, yielded: str
) -> int | None:
    """claim_grid_point on a storage without a database (a journal file, or memory). On a journal file the
    claims of all processes sharing it are made one at a time under an exclusive `flock` of the file itself
    (Optuna's own journal lock is another file, so appends go on meanwhile); each reads the journal's
    latest state (JournalStorage replays the file before it answers) and appends its `grid_id` before the
    next claim reads. In memory one process holds the study: nothing to lock."""
    path = journal_file(storage)
    with contextlib.ExitStack() as locked:
        if path is not None:
            import fcntl

            journal = locked.enter_context(open(path, "rb"))
            fcntl.flock(journal, fcntl.LOCK_EX)
            locked.callback(fcntl.flock, journal, fcntl.LOCK_UN)
        trials = storage.get_all_trials(study, deepcopy=False)
        mine = next(t for t in trials if trial_id(t) == trial)
        if "grid_id" in mine.system_attrs:
            return int(mine.system_attrs["grid_id"])
        about = [(trial_id(t), t.number, t.state, t.system_attrs) for t in trials]
        free = free_grid_point(about, trial, points, yielded)
        if free is not None:
            storage.set_trial_system_attr(trial, "grid_id", free)
        return free
