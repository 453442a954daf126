"""Named points on a trial's way, and `harness eval`'s, where a fault-injection test holds a process, so
that it signals, kills or fails it exactly there instead of racing a running trial.

Production installs no pauser: reaching a point is a call that does nothing. The tests install one
(tests/pauses.py, which reads HARNESS_PAUSE_AT) in the test process and in the fork server that every
command they launch is forked from (harness.fleet.forked).

Points: `trial_run_created` (a trial's MLflow run exists, its id not yet recorded on the Optuna trial),
`trial_started` (the id recorded, training not begun), `trial_scored` (trained and scored, the run not
yet ended), `trial_finished` (the run ended FINISHED, the value not yet told to Optuna), `trial_valued`
(the objective has returned the value, Ctrl-C and SIGTERM held until Optuna records it) and `eval_scored`
(`harness eval` has printed its scores, its JSON and MLflow run not yet written)."""

from __future__ import annotations

from collections.abc import Callable

POINTS = frozenset({"trial_run_created", "trial_started", "trial_scored", "trial_finished", "trial_valued",
                    "eval_scored"})  # fmt: skip
_pauser: list[Callable[[str], None]] = []


def install_pauser(pauser: Callable[[str], None]) -> None:
    """From now on `pauser(point)` runs at every point this process reaches (one pauser at a time)."""
    _pauser[:] = [pauser]


def reached(point: str) -> None:
    """The process is at `point` (one of POINTS): a test's pauser may hold it here."""
    if point not in POINTS:
        raise ValueError(f"unknown pause point {point!r}; one of {', '.join(sorted(POINTS))}")
    for pauser in _pauser:
        pauser(point)
