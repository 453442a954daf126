"""Pause points for the fault-injection tests: a process started with
`HARNESS_PAUSE_AT="<point>=<seconds>[,<point>=<seconds>...]"` sleeps that long each time it reaches a
named point (less, once the file named by HARNESS_PAUSE_RELEASE exists), so a test can signal, kill or
fail it exactly there instead of racing a running trial. Unset (every normal run) a point costs one
environment lookup.

Points: `trial_run_created` (a trial's MLflow run exists, its id not yet recorded on the Optuna trial),
`trial_started` (the id recorded, training not begun), `trial_scored` (trained and scored, the run not
yet ended), `trial_finished` (the run ended FINISHED, the value not yet told to Optuna) and `eval_scored`
(`harness eval` has printed its scores, its JSON and MLflow run not yet written)."""

from __future__ import annotations

import os
import time


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
