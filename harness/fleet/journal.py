"""Optuna's journal file, written so that Ctrl-C or SIGTERM never lands inside a write.

Optuna's file locks (optuna 5.0 `JournalFileSymlinkLock.release` / `JournalFileOpenLock.release`) clean up
after any exception by unlinking a renamed lock file that, when the exception came before the rename,
does not exist: a Ctrl-C there turns into `FileNotFoundError`, the interruption is lost, the trial is
marked failed and the study goes on. A Ctrl-C while the lock is held but before the write leaves the lock
file behind, and every other process then waits out its grace period (30 s). Here each append (take the
lock, write, fsync, release: milliseconds; up to the grace period when another process left a stale lock)
runs with the signals held (harness.fleet.signals.signals_held) and they act once it is done.
"""

from __future__ import annotations

from typing import Any

from optuna.storages.journal import JournalFileBackend

from harness.fleet.signals import signals_held


class SteadyJournalBackend(JournalFileBackend):
    """JournalFileBackend whose appends are never interrupted half-way."""

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        with signals_held():
            super().append_logs(logs)
