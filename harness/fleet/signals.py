"""How a process stops, and stops cleanly: SIGTERM as Ctrl-C, signals held across a journal write, and
the pause points where the fault-injection tests stop it.

SIGTERM is handled as Ctrl-C is: `timeout`, Slurm (preemption, `scancel`), Kubernetes (pod eviction) and
`docker compose stop` all end a process with SIGTERM, then SIGKILL after a grace period.

Inside `sigterm_as_interrupt()` a SIGTERM raises `Terminated` (a KeyboardInterrupt) in the main thread, so
the same clean stop runs as for Ctrl-C: the running trial's MLflow run ends KILLED with the reason, its
Optuna trial is marked interrupted (run again on resume, or queued again at once on a database storage),
the parent run ends KILLED with its `outcome` tag, and the command exits 143 (128 + 15; Ctrl-C: 130).
A second SIGTERM or Ctrl-C during that clean-up ends the process at once (the default action).

Inside `signals_held()` Ctrl-C and SIGTERM wait until the block ends and then act as they would have: code
that cannot survive an exception half-way (a lock taken, a line written) is never interrupted in the middle.
Optuna's journal file needs that (`SteadyJournalBackend`): its file locks (optuna 5.0
`JournalFileSymlinkLock.release` / `JournalFileOpenLock.release`) clean up after any exception by unlinking
a renamed lock file that, when the exception came before the rename, does not exist: a Ctrl-C there turns
into `FileNotFoundError`, the interruption is lost, the trial is marked failed and the study goes on. A
Ctrl-C while the lock is held but before the write leaves the lock file behind, and every other process
then waits out its grace period (30 s). So each append (take the lock, write, fsync, release: milliseconds;
up to the grace period when another process left a stale lock) runs with the signals held.

Pause points (`pause_at`), where the fault-injection tests signal a process: one started with
`HARNESS_PAUSE_AT="<point>=<seconds>[,<point>=<seconds>...]"` sleeps that long each time it reaches a
named point (less, once the file named by HARNESS_PAUSE_RELEASE exists), so a test can signal, kill or
fail it exactly there instead of racing a running trial. Unset (every normal run) a point costs one
environment lookup.

Points: `trial_run_created` (a trial's MLflow run exists, its id not yet recorded on the Optuna trial),
`trial_started` (the id recorded, training not begun), `trial_scored` (trained and scored, the run not
yet ended), `trial_finished` (the run ended FINISHED, the value not yet told to Optuna) and `eval_scored`
(`harness eval` has printed its scores, its JSON and MLflow run not yet written)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

from optuna.storages.journal import JournalFileBackend

TERMINATED_EXIT = 128 + signal.SIGTERM
INTERRUPTED_EXIT = 128 + signal.SIGINT


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM."""


def stop_reason(exc: BaseException) -> str:
    """The words a run's `error` / `outcome` tag gets for an interruption."""
    return "terminated by SIGTERM" if isinstance(exc, Terminated) else "interrupted (Ctrl-C)"


def stop_signal(exc: BaseException) -> int:
    """The signal to pass on to child workers for an interruption."""
    return signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT


def _terminate(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second signal: no second clean-up, the process ends
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise Terminated


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises Terminated while the block runs (main thread only); the handlers are restored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = signal.signal(signal.SIGTERM, _terminate), signal.getsignal(signal.SIGINT)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, saved[0])
        signal.signal(signal.SIGINT, saved[1])


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM received while the block runs are acted on when it ends, by the handler that was
    in place (KeyboardInterrupt, Terminated, or the default action); the first one received counts.
    Python runs signal handlers in the main thread only, so other threads need no hold."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[tuple[int, FrameType | None]] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append((signum, frame))

    saved = {signum: signal.signal(signum, hold) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
        if received:
            _act_on(*received[0], saved[signal.Signals(received[0][0])])  # a handler is given an int


def _act_on(signum: int, frame: FrameType | None, handler: object) -> None:
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        os.kill(os.getpid(), signum)


class SteadyJournalBackend(JournalFileBackend):
    """JournalFileBackend whose appends are never interrupted half-way."""

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        with signals_held():
            super().append_logs(logs)


def pause_at(point: str) -> None:
    """Sleep here when HARNESS_PAUSE_AT names `point` (one of the points above): that many seconds, or
    until the file HARNESS_PAUSE_RELEASE names exists (a test that has done its part lets it go on, and
    no later pause holds it)."""
    spec = os.environ.get("HARNESS_PAUSE_AT")
    if not spec:
        return
    for item in spec.split(","):
        name, _, seconds = item.partition("=")
        if name.strip() == point:
            _sleep(float(seconds), os.environ.get("HARNESS_PAUSE_RELEASE"))


def _sleep(seconds: float, release: str | None) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0 and not (release and os.path.exists(release)):
        time.sleep(min(left, 0.1) if release else left)
