"""Metric names as MLflow stores them, and as the harness (report specs, code) names them.

The MLflow UI groups a run's charts by the part of a metric's name before the first `/`. The harness
names metrics with dots (`train.loss`, `dev.STSBenchmark.spearman`, `STS12-16.wmean`) and logs them
under a section:

    train.loss, train.lr, train.steps       -> train/loss, train/lr, train/steps    (training curves)
    dev.STSBenchmark.spearman(.best)        -> dev/STSBenchmark.spearman(.best)     (dev curves)
    train_set.sst.acc                       -> train_set/sst.acc                    (train-set curves)
    trials.complete, best.objective         -> trials/complete, best/objective      (a study's parent run)
    seconds.encode, seconds.MR              -> seconds/encode, seconds/MR           (`harness eval`'s times)
    claims.holds, claims.reversed           -> claims/holds, claims/reversed        (a report's verdicts)
    STS12.all.spearman, STS.avg, MR.acc     -> test/STS12.all.spearman, ...         (final scores)
    objective                               -> objective                            (the trial's Optuna value)

`logged` maps a harness name to the stored one and `canonical` back; runs stored before this scheme
(dotted names only) read back unchanged, so every report spec works on old and new runs alike.
"""

from __future__ import annotations

from typing import Any

# curves, counters and times, by their first part
SECTIONS = ("train", "dev", "train_set", "trials", "best", "seconds", "claims")
FINAL = "test"  # every other score: the final evaluation's
OBJECTIVE = "objective"  # the trial's objective value (Optuna's), a top-level metric the compare view offers


def logged(name: str) -> str:
    """The name MLflow stores for the harness metric `name`."""
    if name == OBJECTIVE:
        return name
    head, dot, rest = name.partition(".")
    if dot and head in SECTIONS:
        return f"{head}/{rest}"
    return f"{FINAL}/{name}"


def canonical(stored: str) -> str:
    """The harness name of a stored metric (a name without `/`, from an older run, is its own)."""
    head, slash, rest = stored.partition("/")
    if not slash:
        return stored
    return rest if head == FINAL else f"{head}.{rest}"


def metrics_of(run: Any) -> dict[str, float]:
    """An MLflow run's latest metrics under their harness names."""
    return {canonical(k): v for k, v in run.data.metrics.items()}


def history(client: Any, run_id: str, name: str) -> list[Any]:
    """Every logged point of the harness metric `name` (stored under its new name or, for older runs, the
    dotted one)."""
    return client.get_metric_history(run_id, logged(name)) or client.get_metric_history(run_id, name)
