"""How a trial is scored, by the method's `evaluation` kind: one dev score during training (the Optuna
objective) and the final metrics.

- `sts`: STS-B dev Spearman; finally STS12-16, STS-B test, SICK-R test and their average.
- `multitask`: CS224N dev overall (Chen's mean; the single task's score for single-task methods);
  finally every dev score and both overalls, and the dev predictions (for ensembles).
- `ensemble`: the same scores, from the method's combined predictions of other runs (no encoder).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.evaluate.multitask import predict_multitask, score_predictions
from harness.evaluate.sts import STS_TASKS
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks, flat_metrics

SINGLE_TASK_SCORE = {"sst": "sst.acc", "quora": "quora.acc", "sts": "sts.pearson"}


@dataclass
class Evaluator:
    method: Any
    config: Any
    data: Any
    data_dir: Path
    encode: SentenceEncoder | None  # None where the method loads no encoder (the ensemble)
    final_encode: SentenceEncoder | None

    @property
    def dev_metric(self) -> str:
        if self.method.evaluation == "sts":
            return "dev.STSBenchmark.spearman"
        tasks = self.method.tasks
        return "dev.overall" if len(tasks) == 3 else f"dev.{SINGLE_TASK_SCORE[tasks[0]]}"

    def _predictions(self, encode: SentenceEncoder | None) -> dict[str, Any]:
        if self.method.evaluation == "ensemble":
            return self.method.combined_predictions(self.data)
        return predict_multitask(self.method, self.method.task_data(self.data), encode, self.method.tasks)

    def dev(self) -> float:
        if self.method.evaluation == "sts":
            dev = evaluate_tasks(self.encode, self.data_dir, ["STSBenchmark-dev"], self.config.text_variant)
            return float(dev["STSBenchmark-dev"]["spearman"])
        scores = score_predictions(self._predictions(self.encode), self.method.task_data(self.data))
        return scores[self.dev_metric.removeprefix("dev.")]

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        """(MLflow metrics, the JSON-able results)."""
        if self.method.evaluation == "sts":
            results = evaluate_tasks(self.final_encode, self.data_dir, STS_TASKS, self.config.text_variant)
            return flat_metrics(results), results
        predictions = self._predictions(self.final_encode)
        scores = score_predictions(predictions, self.method.task_data(self.data))
        results = {"scores": scores, "predictions": {k: v.tolist() for k, v in predictions.items()}}
        return {f"dev.{k}": v for k, v in scores.items()}, results
