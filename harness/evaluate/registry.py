"""The evaluation-task registry, in the style of MTEB's task metadata: each task family registers its
tasks in one file of `harness/evaluate/tasks/` with `@register_task`; suites are named lists of tasks;
aggregates (`STS.avg`, ...) are declared by name with their member tasks, so a new task never changes
what an existing aggregate means.

A task is: a loader `(data_dir, text_variant) -> data`, the sentences of that data, a scorer
`(data, embeddings, options) -> {score: value}`, its main score, its splits, a kind, and the names of the
scores its scorer returns (what a run logs as `<task>.<score>`: harness.evaluate.suite.flat_metric_names).

A scorer hands back its task's per-item record (harness.stats.items: each test item's prediction beside
its gold value) without changing the JSON shape of its scores: it returns the record under the private
key ITEMS, and `evaluate_tasks` takes it out into its caller's collector, a list that gets one record per
task that has one (`take_items`). A scorer without a record (geometry, a task registered elsewhere)
returns its scores alone, and its task is not in the record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.errors import HarnessError, did_you_mean_any

if TYPE_CHECKING:  # pandas: only where a record is kept
    import pandas as pd

Embeddings = dict[str, np.ndarray]
Loader = Callable[[Path, str], Any]


@dataclass(frozen=True)
class ScoreOptions:
    """What a scorer may be told: `preset` is SentEval's transfer setting (prototyping: 5 folds),
    `classifier` its logistic regression (`sklearn`, or SentEval's `pytorch` one, as Liao ran it) and
    `device` where a PyTorch classifier runs (the encoder's)."""

    preset: str = "prototyping"
    classifier: str = "sklearn"
    device: str = "cpu"


@dataclass(frozen=True)
class Task:
    name: str
    kind: str
    load: Loader
    sentences: Callable[[Any], Iterable[str]]
    score: Callable[[Any, Embeddings, ScoreOptions], dict[str, object]]
    main_score: str
    splits: tuple[str, ...]
    description: str = ""
    # the numeric scores the scorer returns, `n` (a count, not logged) aside: the metric names a run
    # logs for the task are `<task>.<score>` (harness.evaluate.suite.flat_metrics)
    scores: tuple[str, ...] = ()

    @property
    def aggregates(self) -> tuple[str, ...]:
        """The declared aggregates this task is a member of."""
        return tuple(name for name, agg in _AGGREGATES.items() if self.name in agg.members)


@dataclass(frozen=True)
class Aggregate:
    """The mean of `score` over all `members`; `STS.avg` is SimCSE's Avg. A result missing a member has
    no value: a mean over some members under the name of the mean over all would not be the paper's."""

    name: str
    members: tuple[str, ...]
    score: str
    description: str = ""

    def value(self, results: dict[str, dict[str, object]]) -> float | None:
        if not all(t in results and self.score in results[t] for t in self.members):
            return None
        return float(np.mean([float(results[t][self.score]) for t in self.members]))  # type: ignore[arg-type]


_TASKS: dict[str, Task] = {}
_AGGREGATES: dict[str, Aggregate] = {}
_SUITES: dict[str, tuple[str, ...]] = {}


def register_task(
    name: str,
    *,
    kind: str,
    sentences: Callable[[Any], Iterable[str]],
    scorer: Callable[[Any, Embeddings, ScoreOptions], dict[str, object]],
    main_score: str,
    splits: tuple[str, ...],
    description: str = "",
    scores: tuple[str, ...] | None = None,
) -> Callable[[Loader], Loader]:
    """Decorator on a task's loader: `@register_task("STS12", kind="sts", ...)`. `scores`: the numeric
    scores the scorer returns (`n` aside), by default its main score alone."""

    def decorate(loader: Loader) -> Loader:
        if name in _TASKS:
            raise ValueError(f"evaluation task {name!r} is registered twice")
        declared = tuple(scores) if scores is not None else (main_score,)
        if main_score not in declared:
            raise ValueError(
                f"evaluation task {name!r}: its main score {main_score!r} is not among its scores"
            )
        _TASKS[name] = Task(name, kind, loader, sentences, scorer, main_score, splits, description, declared)
        return loader

    return decorate


def declare_aggregate(name: str, members: tuple[str, ...], score: str, description: str = "") -> None:
    """A named aggregate over an explicit list of member tasks."""
    _AGGREGATES[name] = Aggregate(name, members, score, description)


def declare_suite(name: str, tasks: tuple[str, ...]) -> None:
    """A named list of tasks (`harness eval --suite NAME`)."""
    _SUITES[name] = tasks


def _loaded() -> None:
    import harness.evaluate.tasks  # noqa: F401  (importing registers every built-in task family)


def get_task(name: str) -> Task:
    """The task called `name`; an unknown name errors with the closest names."""
    _loaded()
    if name in _TASKS:
        return _TASKS[name]
    raise HarnessError(f"unknown task {name!r}; {did_you_mean_any(name, _TASKS, 'see `harness tasks`')}")


def tasks() -> dict[str, Task]:
    _loaded()
    return dict(_TASKS)


def suites() -> dict[str, tuple[str, ...]]:
    _loaded()
    return dict(_SUITES)


def aggregates() -> dict[str, Aggregate]:
    _loaded()
    return dict(_AGGREGATES)


def suite_tasks(name: str) -> tuple[str, ...]:
    known = suites()
    if name not in known:
        hint = did_you_mean_any(name, known, f"choose one of {', '.join(known)}")
        raise HarnessError(f"unknown suite {name!r}; {hint} (see `harness tasks`)")
    return known[name]


ITEMS = "_items"


def take_items(scores: dict[str, object], collector: list[pd.DataFrame] | None) -> dict[str, object]:
    """`scores` without their record, which goes to `collector` (dropped where there is none)."""
    record = scores.pop(ITEMS, None)
    if record is not None and collector is not None:
        collector.append(record)  # type: ignore[arg-type]
    return scores


def collected(collector: list[pd.DataFrame]) -> pd.DataFrame | None:
    """The collected tasks' records as one, or None where no task had one."""
    from harness.stats.items import concat_items

    return concat_items(collector) if collector else None
