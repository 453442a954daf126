"""The metrics a run logs at its final evaluation, by their harness names (those of the report specs'
`columns:` and claims), derived from the run's objective and settings alone: no torch, no data, no runs.

- `sts`: `<task>.<score>` for each score the task's scorer returns (the registry's `scores`) over
  `final_tasks(eval_suite, final_tasks)`, plus every declared aggregate whose members are all there with
  its score (harness.evaluate.suite.flat_metrics);
- `glue`: `dev.<task>.<metric>` for each GLUE metric of the pipeline's last `glue` task;
- `multitask` / `ensemble`: `dev.<score>` for the scores of its scored tasks, with `dev.overall` and
  `dev.overall_r01` when all three are scored (harness.evaluate.cs224n_scores.score_predictions).

The last two log every dev score they can select on (`metric_choices`) under `dev.`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.evaluate.registry import aggregates, get_task
from harness.objectives.glue import GlueObjective
from harness.objectives.multitask import MultitaskObjective
from harness.objectives.sts import STSObjective, final_tasks

if TYPE_CHECKING:
    from harness.spec.run_spec import ResolvedRun

DEV = "dev."


def task_metrics(names: Iterable[str]) -> set[str]:
    """What `flat_metrics` of an evaluation of these tasks holds: each task's scores, and the aggregates
    whose members are all evaluated with the aggregate's score."""
    names = list(names)
    scores = {name: get_task(name).scores for name in names}
    metrics = {f"{name}.{score}" for name, declared in scores.items() for score in declared}
    for aggregate in aggregates().values():
        if all(m in scores and aggregate.score in scores[m] for m in aggregate.members):
            metrics.add(aggregate.name)
    return metrics


def produced_metrics(run: ResolvedRun) -> set[str]:
    """The metric names `run` logs at its final evaluation (see the module's docstring)."""
    objective = run.objective
    if issubclass(objective, STSObjective):
        s = run.settings
        return task_metrics(final_tasks(s.eval_suite, s.final_tasks))
    if issubclass(objective, MultitaskObjective | GlueObjective):  # ensemble: a multitask objective
        return {DEV + name for name in objective.metric_choices(run)}
    raise HarnessError(
        f"objective {objective.name!r} (method {run.settings.method!r}): harness.report.produced does not "
        "know the metrics it logs; add it there"
    )
