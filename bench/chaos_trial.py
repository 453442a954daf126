"""The trial of `bench/chaos.py`, imported by the fork server its coordinator and workers are forked from
(harness.fleet.forked.PRELOAD): importing it replaces `harness.study.trial.train_evaluate_log` with one that
sleeps (CHAOS_SLEEP seconds, bench/fleet_load.py's sleeping trial: bookkeeping only) for every grid point
but the `lambda` values listed in CHAOS_REAL, which train and evaluate the tiny BERT for real, so their
metrics can be held against the same points run alone."""

from __future__ import annotations

import os
from typing import Any

import fleet_load

import harness.study.trial as trial_module

REAL_TRIAL = trial_module.train_evaluate_log


def chaos_trial(run_spec: Any, ctx: Any, run: Any, report: Any, number: int = 0) -> Any:
    """The real trial for the CHAOS_REAL points, else the sleeping one (both read from the environment
    when the trial runs: the fork server imported this before any worker's environment was set)."""
    real = {float(v) for v in os.environ.get("CHAOS_REAL", "").split(",") if v}
    if float(run_spec.flat().get("lambda", -1)) in real:
        return REAL_TRIAL(run_spec, ctx, run, report, number)
    fleet_load.SLEEP[0] = float(os.environ.get("CHAOS_SLEEP", "5"))
    return fleet_load.sleeping_train_and_evaluate(run_spec, ctx, run, report, number)


trial_module.train_evaluate_log = chaos_trial
