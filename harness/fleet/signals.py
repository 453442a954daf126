"""How a process stops, and stops cleanly: SIGTERM as Ctrl-C, and signals held across a journal write
(the points where the fault-injection tests stop a process: harness.fleet.pause_points).

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
up to the grace period when another process left a stale lock) runs with the signals held."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
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
