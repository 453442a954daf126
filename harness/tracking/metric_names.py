"""Metric names as MLflow stores them, and as the harness (report specs, code) names them.

The MLflow UI groups a run's charts by the part of a metric's name before the last `/` (MLflow 3.17: the
named sections in JavaScript's default string order, then one section, "Model metrics", of every metric
without a `/`, then "System metrics"). The harness names metrics with dots (`train.loss`,
`dev.STSBenchmark.spearman`, `STS12-16.wmean`) and logs curves and counters under a section, the final
scores without one, so that a trial's Model metrics tab shows its training and dev curves first and its
final scores (one chart each) last, beside the objective:

    train.loss, train.lr, train.steps       -> train/loss, train/lr, train/steps    (training curves)
    dev.STSBenchmark.spearman(.best)        -> dev/STSBenchmark.spearman(.best)     (dev curves)
    train_set.sst.acc                       -> train_set/sst.acc                    (train-set curves)
    trials.complete, best.objective         -> trials/complete, best/objective      (a study's parent run)
    seconds.encode, seconds.MR              -> seconds/encode, seconds/MR           (`harness eval`'s times)
    claims.holds, claims.reversed           -> claims/holds, claims/reversed        (a report's verdicts)
    STS12.pearson, STS.avg, MR.acc          -> STS12.pearson, STS.avg, MR.acc       (final scores: no section)
    objective                               -> objective                            (the trial's Optuna value)

`logged` maps a harness name to the stored one and `canonical` back. Runs stored earlier read back
unchanged: those of the first scheme (dotted names only) and those that kept the final scores under a
`test/` section (`test/STS12.pearson`; it sorted before `train/`, so ~30 one-point charts came before
the curves), so every report spec works on old and new runs alike.

`objective` is logged with the first dev scores (the best dev score so far, at each dev evaluation, or
with `keep_best: false` the latest: the dev score of the model the trial tests; its
last point is the Optuna value) and flushed before the training curves buffered until then
(harness.tracking.tracker.LoggedRun), so that it is each trial's first stored metric: MLflow 3.17's compare
page opens its parallel-coordinates chart on the first metric the runs share, in the order the store returns
them, the order they were first logged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

OBJECTIVE = "objective"  # the trial's objective value (Optuna's), a top-level metric the compare view offers
OLD_FINAL = "test"  # the section the final scores had before (runs stored with it read back)
STRICT = "HARNESS_STRICT_METRICS"  # set (the tests set it): logging an undeclared metric name fails


@dataclass(frozen=True)
class Family:
    """One kind of metric the harness logs: the first part of its names, its MLflow section (None: no
    section, the UI's "Model metrics") and what it holds."""

    head: str
    section: str | None
    holds: str


# Every metric a run logs is in one of these, or is a final score (`undeclared` says which are).
FAMILIES = (
    Family("train", "train", "training curves (loss and its parts, lr, stage, epoch) and the loop's totals "
           "(steps, best_step, seconds)"),
    Family("dev", "dev", "dev scores at each evaluation, `.best` the best of them"),
    Family("train_set", "train_set", "training-set scores at each evaluation (CS224N)"),
    Family("trials", "trials", "a study's trials by how they ended (its parent run)"),
    Family("best", "best", "a study's best objective (its parent run)"),
    Family("seconds", "seconds", "`harness eval`'s seconds, per task and for encoding"),
    Family("claims", "claims", "a report's verdict counts (the study's parent run)"),
    Family(OBJECTIVE, None, "the dev score of the model the trial would test now (the best so far with "
           "keep_best, else the latest); its last point is the Optuna value"),
)  # fmt: skip
FINAL_SCORES = (
    "final scores, no section: `<task>.<score>` for a registered evaluation task and one of its scores, or "
    "a declared aggregate (harness.evaluate.registry; `harness tasks` lists them)"
)
SECTIONS = tuple(family.head for family in FAMILIES if family.section)  # curves, counters and times


def undeclared(name: str) -> str | None:
    """Why the harness metric `name` is in no declared family (None: it is in one)."""
    head, dot, rest = name.partition(".")
    if name == OBJECTIVE or (head in SECTIONS and rest):
        return None
    from harness.evaluate.registry import aggregates, tasks

    task = tasks().get(head)
    if name in aggregates() or (task is not None and rest in task.scores):
        return None
    heads = ", ".join(f"{family.head}." for family in FAMILIES if family.section)
    return f"metric {name!r} is undeclared: name it under a family ({heads}) or as one of the {FINAL_SCORES}"


def check_declared(names: Any) -> None:
    """Under HARNESS_STRICT_METRICS (the tests), fail on a metric name in no declared family."""
    if os.environ.get(STRICT):
        problems = [problem for name in names if (problem := undeclared(name))]
        if problems:
            raise ValueError("; ".join(problems))


def logged(name: str) -> str:
    """The name MLflow stores for the harness metric `name`."""
    head, dot, rest = name.partition(".")
    if dot and head in SECTIONS:
        return f"{head}/{rest}"
    return name  # a final score or the objective: no section (the UI's "Model metrics", after the curves)


def canonical(stored: str) -> str:
    """The harness name of a stored metric (a name without `/`, a final score or from an older run, is
    its own; `test/NAME`, a final score of a run stored while they had that section, is NAME)."""
    head, slash, rest = stored.partition("/")
    if not slash:
        return stored
    return rest if head == OLD_FINAL else f"{head}.{rest}"


def metrics_of(run: Any) -> dict[str, float]:
    """An MLflow run's latest metrics under their harness names."""
    return {canonical(k): v for k, v in run.data.metrics.items()}


def stored_names(name: str) -> list[str]:
    """Every name under which a run may have stored the harness metric `name`, the current one first."""
    names = [logged(name), name]
    head = name.partition(".")[0]
    if name != OBJECTIVE and head not in SECTIONS:
        names.append(f"{OLD_FINAL}/{name}")
    return list(dict.fromkeys(names))


def history(client: Any, run_id: str, name: str) -> list[Any]:
    """Every logged point of the harness metric `name` (stored under its current name or, for older runs,
    an earlier one)."""
    for stored in stored_names(name):
        points = client.get_metric_history(run_id, stored)
        if points:
            return points
    return []
