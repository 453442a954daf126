"""Multi-task combiners for SST-5, Quora and STS (Chen 4.2; David et al. 3.1; Phillips): one table,
name -> how the tasks share the steps of an epoch (`schedule`) and how a step's task losses become one
update (`backward`).

A schedule is a list of steps; a step maps task names to index batches of that task's training set.
- `average`: every step has one batch of each task; the larger sets are down-sampled to the smallest
  (STS) each epoch; the update is the mean of the task losses.
- `pcgrad`: the same steps; the task gradients are projected against each other (Yu et al., 2020).
- `batch_round_robin`: one task per step, cycling sst, quora, sts; down-sampled as above.
- `epoch_round_robin`: one task per step, all of SST's batches, then Quora's, then STS's (full sets).
- `single`: only `single_task`'s batches.
Adding a combiner is one function and one line in `COMBINERS`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

TASKS = ("sst", "quora", "sts")
Schedule = list[dict[str, list[int]]]
Batches = dict[str, list[list[int]]]


def _aligned(per_task: Batches) -> Schedule:
    steps = min(len(batches) for batches in per_task.values())
    return [{task: per_task[task][i] for task in per_task} for i in range(steps)]


def _batch_round_robin(per_task: Batches) -> Schedule:
    steps = min(len(batches) for batches in per_task.values())
    return [{task: per_task[task][i]} for i in range(steps) for task in per_task]


def _epoch_round_robin(per_task: Batches) -> Schedule:
    return [{task: batch} for task in per_task for batch in per_task[task]]


@dataclass(frozen=True)
class CombinerRule:
    """`schedule`: one epoch's steps from each task's shuffled batches. `backward`: `sum` backpropagates
    the step's loss (the mean of its task losses); `pcgrad` projects the per-task gradients."""

    schedule: Callable[[Batches], Schedule]
    backward: Literal["sum", "pcgrad"]
    single: bool = False


COMBINERS: dict[str, CombinerRule] = {
    "average": CombinerRule(_aligned, "sum"),
    "batch_round_robin": CombinerRule(_batch_round_robin, "sum"),
    "epoch_round_robin": CombinerRule(_epoch_round_robin, "sum"),
    "pcgrad": CombinerRule(_aligned, "pcgrad"),
    "single": CombinerRule(_epoch_round_robin, "sum", single=True),
}
if TYPE_CHECKING:  # mypy cannot read a Literal built at run time: a str to it (pydantic checks the names)
    Combiner = str
else:
    Combiner = Literal[tuple(COMBINERS)]


def _chunks(size: int, batch_size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(size))
    rng.shuffle(order)
    return [order[i : i + batch_size] for i in range(0, size, batch_size)]


def schedule(
    sizes: dict[str, int], batch_size: int, combiner: str, rng: random.Random, single_task: str = "sst"
) -> Schedule:
    """The steps of one epoch; `sizes` maps each task to its training-set size (every task present is
    shuffled, so a single-task run draws the same batches as a multi-task one)."""
    per_task = {task: _chunks(sizes[task], batch_size, rng) for task in TASKS if task in sizes}
    rule = COMBINERS[combiner]
    if rule.single:
        per_task = {single_task: per_task[single_task]}
    return rule.schedule(per_task)
