"""Optuna's RDB storage made to ride out what databases do on clusters: a restart, a dropped connection,
a cold start shared by many processes.

**Retries.** Every storage call that fails for want of the database (a SQLAlchemy OperationalError,
InterfaceError or disconnect anywhere in the exception's chain; Optuna wraps commit errors in
StorageInternalError) is tried again after 0.5, 1, 2, 4, 8, 15, 15, ... s (harness.backoff), until
`HARNESS_DB_RETRY_SECONDS` (default 60 s) have passed since the call first failed. The first failure of
an outage prints one line (`warning: Optuna storage ... unreachable ...; retrying for up to 60 s`; one an
outage); a restart shorter than the window shows nothing else. After the window the call raises
`DatabaseUnavailable`, one line naming the database and what to do, and every later call of this process
fails at once (the process is ending: the runner closes the MLflow runs it owns and exits 1). Pooled
connections are checked before use (SQLAlchemy's `pool_pre_ping`), so connections broken by a restart are
replaced.

**Exactly once.** A write whose connection broke after the server committed it, before the answer
arrived, is retried like any other; the writes a second application would change (creating a trial, a
trial's state change, creating or deleting a study) carry a client-made id that the retry looks for first
(harness.fleet.once_writes), so each applies once.

**Cold start.** Processes started together on an empty database (`docker compose up`, a Slurm array)
race to create Optuna's tables; PostgreSQL's catalogue answers the losers with duplicate-key or
"already exists" errors. On PostgreSQL the schema is created under an advisory lock, one process at a
time (the others then find it made), and only while it is missing; other databases retry the race's
errors within the same window.
A database unreachable when the storage is opened is not waited for: the command says so at once
(`harness worker --wait` waits for it).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

from optuna.exceptions import DuplicatedStudyError
from optuna.storages import RDBStorage
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from harness.backoff import retried_for
from harness.errors import ServiceUnavailable, mask_password
from harness.fleet import once_writes
from harness.fleet.optuna_access import (
    locked_trial,
    rdb_session,
    set_trial_system_attr_in,
    set_trial_values_in,
    trial_system_attr,
    trial_with_system_attr,
)
from harness.fleet.optuna_access import trial_id as id_of
from harness.fleet.trial_beat import TrialBeat
from harness.notices import notice

RETRY_SECONDS = 60.0  # HARNESS_DB_RETRY_SECONDS overrides it
SCHEMA_LOCK = 0x6861726E  # "harn": the advisory lock key schema creation is serialised on
# A database server's connections (PostgreSQL's max_connections: 100 by default) are shared by every
# worker: each keeps one connection between calls, opens up to 4 more while its threads (trial,
# heartbeat, lease) need them at once, and closes those after use; connections are checked before use, so
# those broken by a restart are replaced (bench/fleet_load.py measured the need)
SERVER_POOL = {"pool_pre_ping": True, "pool_size": 1, "max_overflow": 4}
# A connection to a server that accepts it and never answers (a hung middlebox or server, a half-open
# network path) would wait forever in libpq: a connect gives up after CONNECT_TIMEOUT seconds
# (HARNESS_DB_CONNECT_TIMEOUT) and is retried like a refused one, and TCP keepalives end an established
# connection whose peer has gone silent within about a minute (bench/chaos.py found a worker hung on one)
CONNECT_TIMEOUT = 10
KEEPALIVES = {"keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3}


def connect_args(url: str) -> dict[str, Any]:
    """SQLAlchemy's `connect_args` for a PostgreSQL URL (psycopg2): the connect timeout and keepalives, each
    where the URL's own query does not set it; none for other databases."""
    if not url.startswith("postgresql"):
        return {}
    from sqlalchemy.engine import make_url

    given = make_url(url).query
    wanted = {"connect_timeout": int(os.environ.get("HARNESS_DB_CONNECT_TIMEOUT") or CONNECT_TIMEOUT),
              **KEEPALIVES}  # fmt: skip
    return {key: value for key, value in wanted.items() if key not in given}


# the RDBStorage methods that reach the database, Optuna's cache (_CachedStorage) calls included
DATABASE_CALLS = (
    "create_new_study", "delete_study", "set_study_user_attr", "set_study_system_attr",
    "get_study_id_from_name", "get_study_name_from_id", "get_study_directions", "get_study_user_attrs",
    "get_study_system_attrs", "get_trial_user_attrs", "get_trial_system_attrs", "get_all_studies",
    "create_new_trial", "_create_new_trial", "set_trial_param", "_set_trial_param", "get_trial_param",
    "set_trial_state_values", "set_trial_intermediate_value", "set_trial_user_attr", "set_trial_system_attr",
    "get_trial_id_from_study_id_trial_number", "get_trial_number_from_id", "get_trial", "get_all_trials",
    "_get_trials", "get_best_trial", "_get_best_trial_id", "get_n_trials", "get_trial_params",
    "_get_stale_trial_ids",
)  # fmt: skip
T = TypeVar("T")
STATE_WRITE = once_writes.STATE_WRITE_ID


class DatabaseUnavailable(ServiceUnavailable):  # noqa: N818
    """The database stayed unreachable for the whole retry window; the CLI exits 1 with this line."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "database")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_transient(exc: BaseException) -> bool:
    """A connection that failed or broke (server down, restarting, shutting down, network), as opposed
    to an error of the statement itself."""
    from sqlalchemy import exc as sa

    for link in _chain(exc):
        if isinstance(link, sa.DBAPIError) and link.connection_invalidated:
            return True
        if isinstance(link, (sa.OperationalError, sa.InterfaceError, sa.DisconnectionError, sa.TimeoutError)):
            return True
    return False


def cause(exc: BaseException) -> str:
    """The database driver's own first line (`connection refused`, `server closed the connection`)."""
    from sqlalchemy import exc as sa

    for link in _chain(exc):
        if isinstance(link, sa.DBAPIError) and link.orig is not None:
            exc = link.orig
            break
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def is_schema_race(exc: BaseException) -> bool:
    """The error a process gets when another created the same table or type a moment before."""
    text = " ".join(str(link) for link in _chain(exc))
    return "already exists" in text or "duplicate key" in text.lower() or "UNIQUE constraint" in text


class Retry:
    """Runs database calls with the bounded back-off above; shared by the threads of one storage."""

    def __init__(self, database: str, seconds: float | None = None) -> None:
        self.database = database
        self.seconds = seconds or float(os.environ.get("HARNESS_DB_RETRY_SECONDS") or RETRY_SECONDS)
        self.down = ""  # why, once the window has passed
        self._failed_at = -float("inf")  # the last failure, of any thread
        self._lock = threading.Lock()
        self._inside = threading.local()  # nested calls (get_best_trial -> get_trial) retry once, outside

    def unavailable(self, reason: str) -> DatabaseUnavailable:
        return DatabaseUnavailable(
            f"Optuna storage {self.database} unreachable for {self.seconds:.0f} s ({reason}); this "
            "process's trials go back to the queue: re-run the same command once the database is back"
        )

    def __call__(self, call: Callable[[], T], also: Callable[[BaseException], bool] = is_transient) -> T:
        if self.down:
            raise self.unavailable(self.down)
        if getattr(self._inside, "active", False):
            return call()
        self._inside.active = True
        try:
            return self._with_backoff(call, also)
        finally:
            self._inside.active = False

    def _with_backoff(self, call: Callable[[], T], retried: Callable[[BaseException], bool]) -> T:
        def give_up(exc: Exception) -> DatabaseUnavailable:
            self.down = cause(exc)
            return self.unavailable(self.down)

        def warn(exc: Exception, elapsed: float) -> None:
            self._warn(cause(exc))

        return retried_for(call, self.seconds, retried, warn, give_up)

    def _warn(self, reason: str) -> None:
        # one line an outage, whichever thread (trial, heartbeat, lease) meets it first; an outage is a
        # run of failures less than a window apart (a restart's flapping, several threads: one line)
        with self._lock:
            now = time.monotonic()
            new_outage, self._failed_at = now - self._failed_at > self.seconds, now
        if not new_outage:
            return
        notice(f"warning: Optuna storage {self.database} unreachable ({reason}); retrying for up to "
               f"{self.seconds:.0f} s")  # fmt: skip


@contextlib.contextmanager
def schema_lock(url: str) -> Iterator[bool]:
    """Whether Optuna's tables exist already (then nothing is locked: opening a storage creates nothing,
    and 64 workers starting together do not queue on the lock); if not, on PostgreSQL a session advisory
    lock is held while they are made (released with the connection), unless another process made them
    while this one waited for the lock. Other databases: False, nothing locked (their races are
    retried)."""
    if not url.startswith("postgresql"):
        yield False
        return
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(url, poolclass=NullPool, connect_args=connect_args(url))
    made = sqlalchemy.text("SELECT to_regclass('version_info')")
    try:
        with engine.connect() as connection:
            if connection.execute(made).scalar() is None:
                connection.execute(sqlalchemy.text(f"SELECT pg_advisory_lock({SCHEMA_LOCK})"))
                if connection.execute(made).scalar() is None:  # not made while this process waited
                    yield False
                    return
        yield True
    finally:
        engine.dispose()


class SteadyRDBStorage(RDBStorage):
    """RDBStorage with every database call retried (`Retry`), its schema created once under a lock, and
    heartbeats that never end the heartbeat thread (Optuna's thread has no error handling: one failed
    write would end it, and the live trial would be taken for lost and run twice)."""

    def __init__(self, url: str, heartbeat: int, grace: int, retry_seconds: float | None = None) -> None:
        self.retry = Retry(mask_password(url), retry_seconds)
        self.attempts = once_writes.Attempts()
        self.beat = TrialBeat(self.record_heartbeat, heartbeat)
        pool = {} if url.startswith("sqlite") else {**SERVER_POOL, "connect_args": connect_args(url)}

        def create() -> None:
            with schema_lock(url) as made:
                try:
                    super(SteadyRDBStorage, self).__init__(
                        url, engine_kwargs=pool, heartbeat_interval=heartbeat, grace_period=grace,
                        skip_table_creation=made,
                    )  # fmt: skip
                except BaseException:  # a failed attempt leaves no pooled connection behind
                    if getattr(self, "engine", None) is not None:
                        self.engine.dispose()
                    raise

        self.retry(create, also=is_schema_race)  # unreachable at the start: the caller's one line, at once

    def create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> int:
        return id_of(self._create_new_trial(study_id, template_trial))

    def _create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> FrozenTrial:
        """Optuna's trial creation, its template carrying a creation id made once for all attempts (a lost
        trial's re-run: an id naming the lost trial, made once whoever queues it). A trial made to run
        (`ask`: no template) beats from now on (harness.fleet.trial_beat)."""
        made = once_writes.rerun_id(template_trial) or once_writes.new_id()
        template = once_writes.with_creation_id(template_trial, made)
        try:
            created = self.retry(lambda: RDBStorage._create_new_trial(self, study_id, template))
        finally:
            self.attempts.forget(made)
        if template_trial is None:
            self.beat.hold(id_of(created))
        return created

    def _get_prepared_new_trial(self, study_id: int, template_trial: FrozenTrial | None, session: Any) -> Any:
        """Inside Optuna's creation transaction (the study row locked): a retry whose earlier attempt
        committed, or a second re-run of the same lost trial, gets that trial back instead of a new one."""
        made = (template_trial.system_attrs if template_trial else {}).get(once_writes.CREATION_ID)
        if made is not None and (self.attempts.retried(made) or once_writes.is_rerun_id(made)):
            earlier = trial_with_system_attr(session, study_id, once_writes.CREATION_ID, made)
            if earlier is not None:
                return earlier
        return super()._get_prepared_new_trial(study_id, template_trial, session)

    def set_trial_state_values(
        self, trial_id: int, state: TrialState, values: Sequence[float] | None = None
    ) -> bool:
        made = once_writes.new_id()
        try:
            written = self.retry(lambda: self._set_state_once(trial_id, state, values, made))
        finally:
            self.attempts.forget(made)
            if state.is_finished():  # ended, or refused as ended by another process: no more beats
                self.beat.release(trial_id)
        if state == TrialState.RUNNING and written:  # a queued trial taken: it beats from now on
            self.beat.hold(trial_id)
        return written

    def _set_state_once(
        self, trial_id: int, state: TrialState, values: Sequence[float] | None, made: str
    ) -> bool:
        """Optuna's RDBStorage.set_trial_state_values (the trial row locked; values, then the state: a
        take (RUNNING) only of a WAITING trial, else False; start and completion times), with the write's id
        stored in the same transaction; a retry that finds its id answers True."""
        from sqlalchemy import exc as sqlalchemy_exc

        try:
            with rdb_session(self) as session:
                trial = locked_trial(session, trial_id)
                if self.attempts.retried(made) and trial_system_attr(session, trial_id, STATE_WRITE) == made:
                    return True
                self.check_trial_is_updatable(trial_id, trial.state)
                set_trial_values_in(self, session, trial, values)
                if state == TrialState.RUNNING and trial.state != TrialState.WAITING:
                    return False
                set_trial_system_attr_in(self, session, trial_id, STATE_WRITE, made)
                trial.state = state
                if state == TrialState.RUNNING:
                    trial.datetime_start = datetime.now()
                if state.is_finished():
                    trial.datetime_complete = datetime.now()
        except sqlalchemy_exc.IntegrityError:
            return False
        return True

    def create_new_study(self, directions: Sequence[StudyDirection], study_name: str | None = None) -> int:
        """A retry that finds the (named) study made returns it: the name is the creation's id."""
        return self._once(
            lambda: RDBStorage.create_new_study(self, directions, study_name),
            DuplicatedStudyError if study_name is not None else (),
            lambda: RDBStorage.get_study_id_from_name(self, study_name or ""),
        )

    def delete_study(self, study_id: int) -> None:
        """A retry that finds no study is done: the first attempt deleted it."""
        self._once(lambda: RDBStorage.delete_study(self, study_id), KeyError, lambda: None)

    def _once(
        self, write: Callable[[], T], done_if: type[Exception] | tuple[()], answer: Callable[[], T]
    ) -> T:
        """`write` retried; a retry refused with `done_if` found the earlier attempt's write: `answer()`."""
        attempts = 0

        def attempt() -> T:
            nonlocal attempts
            attempts += 1
            try:
                return write()
            except done_if:
                if attempts == 1:
                    raise
                return answer()

        return self.retry(attempt)

    def record_heartbeat(self, trial_id: int) -> None:
        try:
            self.retry(lambda: super(SteadyRDBStorage, self).record_heartbeat(trial_id))
        except DatabaseUnavailable:
            pass  # the trial's own next storage call says so; the thread stays alive
        except Exception as exc:  # the next beat tries again
            notice(f"warning: heartbeat of trial id {trial_id} not recorded: {exc}")


def _steady(method: Callable[..., T]) -> Callable[..., T]:
    @functools.wraps(method)
    def call(self: SteadyRDBStorage, *args: Any, **kwargs: Any) -> T:
        return self.retry(lambda: method(self, *args, **kwargs))

    return call


for _name in DATABASE_CALLS:
    if _name not in SteadyRDBStorage.__dict__:  # the once-only writes above retry themselves
        setattr(SteadyRDBStorage, _name, _steady(getattr(RDBStorage, _name)))


def close(storage: object) -> None:
    """Close a storage's pooled database connections (an RDB storage a process stops using); else nothing."""
    engine = getattr(storage, "engine", None)
    if engine is not None:
        engine.dispose()
