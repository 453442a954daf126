"""Heartbeats for the trial a worker holds, from the moment it holds it until it ends.

Optuna beats for a trial only while its objective runs (`optuna/study/_optimize.py`, `_run_trial`: the
heartbeat thread starts after `study.ask()` returns). `ask` itself, though, creates the trial RUNNING and
then runs the sampler, which may read every trial of the study (the grid sampler past the grid's size,
NSGA-II's population): on a busy database that took longer than the silence limit, other workers took the
new trial for lost, and its worker's next ask met the same fate, until workers did nothing else
(bench/chaos.py, 16 workers at the end of a 960-point grid). `TrialBeat` beats every `interval` seconds
for the trial this process created or took, from its creation until its state is written finished (or the
next trial is taken), so a trial is silent only when its worker is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class TrialBeat:
    """One beating thread at a time, for the trial this process holds (`hold`) until `release`."""

    def __init__(self, beat: Callable[[int], None], interval: float) -> None:
        self._beat = beat
        self._interval = interval
        self._held: int | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def hold(self, trial_id: int) -> None:
        """Beat for `trial_id` from now on (its first beat at once), instead of any trial held before."""
        with self._lock:
            self._stop.set()
            self._held, self._stop = trial_id, threading.Event()
            thread = threading.Thread(target=self._run, args=(trial_id, self._stop), daemon=True)
        thread.start()

    def release(self, trial_id: int) -> None:
        """`trial_id` ended: stop beating for it (a trial not held now is left as it is)."""
        with self._lock:
            if self._held == trial_id:
                self._stop.set()
                self._held = None

    @property
    def held(self) -> int | None:
        return self._held

    def _run(self, trial_id: int, stop: threading.Event) -> None:
        while not stop.is_set():
            self._beat(trial_id)  # never raises: SteadyRDBStorage.record_heartbeat keeps the thread alive
            stop.wait(self._interval)
