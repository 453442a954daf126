"""Multi-task batch schedules for SST-5, Quora and STS (Chen 3.4; David et al.; Phillips).

Each schedule is a list of steps; a step maps task names to index batches of that task's training set.
- `average` / `pcgrad`: every step has one batch of each task; the larger sets are down-sampled to the
  smallest (STS) each epoch. The method averages the three losses (or PCGrad combines their gradients).
- `batch_round_robin`: one task per step, cycling sst, quora, sts; down-sampled as above.
- `epoch_round_robin`: one task per step, all of SST's batches, then Quora's, then STS's (full sets).
- `single`: only `single_task`'s batches.
"""

from __future__ import annotations

import random
from typing import Literal

TASKS = ("sst", "quora", "sts")
Combiner = Literal["average", "batch_round_robin", "epoch_round_robin", "pcgrad", "single"]
Schedule = list[dict[str, list[int]]]


def _chunks(size: int, batch_size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(size))
    rng.shuffle(order)
    return [order[i : i + batch_size] for i in range(0, size, batch_size)]


def schedule(
    sizes: dict[str, int], batch_size: int, combiner: Combiner, rng: random.Random, single_task: str = "sst"
) -> Schedule:
    """The steps of one epoch; `sizes` maps each task to its training-set size."""
    per_task = {task: _chunks(sizes[task], batch_size, rng) for task in TASKS if task in sizes}
    if combiner == "single":
        return [{single_task: b} for b in per_task[single_task]]
    if combiner == "epoch_round_robin":
        return [{task: b} for task in per_task for b in per_task[task]]
    steps = min(len(batches) for batches in per_task.values())
    if combiner == "batch_round_robin":
        return [{task: per_task[task][i]} for i in range(steps) for task in per_task]
    return [{task: per_task[task][i] for task in per_task} for i in range(steps)]
