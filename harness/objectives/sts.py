"""`sts`: STS-B dev Spearman during training (or Pearson); finally STS12-16, STS-B test and SICK-R test
(cosine similarity vs gold, x 100) and their average `STS.avg` (harness/evaluate/tasks/sts.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.evaluate.sts import STS_TASKS, load_sts_task
from harness.evaluate.suite import evaluate_tasks, flat_metrics
from harness.objectives.registry import Objective, register_objective

DEV_TASK = "STSBenchmark-dev"


@register_objective("sts")
class STSObjective(Objective):
    @classmethod
    def metric_choices(cls, run: Any) -> tuple[str, ...]:
        return ("STSBenchmark.spearman", "STSBenchmark.pearson")

    def dev_scores(self) -> dict[str, float]:
        dev = evaluate_tasks(self.encode, self.data_dir, [DEV_TASK], self.run.settings.text_variant)
        return {f"STSBenchmark.{k}": float(dev[DEV_TASK][k]) for k in ("spearman", "pearson")}

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        results = evaluate_tasks(self.final_encode, self.data_dir, STS_TASKS, self.run.settings.text_variant)
        return flat_metrics(results), results

    @classmethod
    def preflight(cls, run: Any, data_dir: Path) -> None:
        variant = run.settings.text_variant
        for task in STS_TASKS:
            load_sts_task(data_dir, task, variant)
        load_sts_task(data_dir, "STSBenchmark", variant, "dev")
