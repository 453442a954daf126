"""`multitask`: the CS224N dev sets (SST-5 accuracy, Quora accuracy, STS Pearson r; harness.evaluate.
multitask). The dev score is Chen's `overall` by default (David et al.'s `overall_r01` or one task's score
on request); a single-task configuration is scored on its task. Finally every dev score, both overalls,
and the dev predictions (which an ensemble combines), with their per-item record (`multitask_items`).
With `train_eval_size`, the same scores on a fixed random part of each training set at every evaluation
(David et al. Figs. 2-3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from harness.data.cs224n import train_as_dev
from harness.scoring.registry import Scorer, register_scorer

SST_EMBEDDINGS = "sst_dev_embeddings.npy"  # the artifact harness.report.parts.projection reads
SINGLE_TASK_SCORE = {"sst": "sst.acc", "quora": "quora.acc", "sts": "sts.pearson"}


@register_scorer("multitask")
class MultitaskScorer(Scorer):
    saves_embeddings = True

    @classmethod
    def metric_choices(cls, run: Any) -> tuple[str, ...]:
        tasks = run.method.scored_tasks(run.params, run.stages)
        singles = tuple(SINGLE_TASK_SCORE[t] for t in tasks)
        return ("overall", "overall_r01", *singles) if len(tasks) == 3 else singles

    def predictions(self, encode: Any) -> dict[str, Any]:
        from harness.evaluate.cs224n_scores import predict_multitask  # torch: only where a trial scores

        model = self.model
        return predict_multitask(model, model.task_data(self.data), encode, model.tasks)

    def dev_scores(self) -> dict[str, float]:
        from harness.evaluate.cs224n_scores import score_predictions

        return score_predictions(self.predictions(self.encode), self.model.task_data(self.data))

    def train_scores(self) -> dict[str, float]:
        from harness.evaluate.cs224n_scores import predict_multitask, score_predictions

        size = self.run.settings.train_eval_size
        if not size:
            return {}
        data = train_as_dev(self.model.task_data(self.data), size)
        tasks = self.model.tasks
        assert self.encode is not None  # a model with CS224N heads has an encoder
        return score_predictions(predict_multitask(self.model, data, self.encode, tasks), data)

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        from harness.evaluate.cs224n_scores import multitask_items, score_predictions

        predictions, data = self.predictions(self.final_encode), self.model.task_data(self.data)
        scores = score_predictions(predictions, data)
        self.final_items = multitask_items(predictions, data)
        results = {"scores": scores, "predictions": {k: v.tolist() for k, v in predictions.items()}}
        return {f"dev.{k}": v for k, v in scores.items()}, results

    def arrays(self) -> dict[str, np.ndarray]:
        """With `save_embeddings`, the final model's SST dev embeddings in the dev file's order (Phillips
        Fig. 3: the report's projection figure draws them in 2-D)."""
        if not self.run.settings.save_embeddings or self.final_encode is None:
            return {}
        texts = self.model.task_data(self.data).sst_dev.texts
        vectors = self.final_encode(sorted(set(texts)))
        return {SST_EMBEDDINGS: np.stack([vectors[t] for t in texts]).astype(np.float32)}

    @classmethod
    def dev_texts(cls, run: Any, data_dir: Path) -> list[str]:
        """The dev sentences of the scored tasks (SST texts, both sides of Quora and STS pairs)."""
        data, tasks = run.sources(data_dir).tasks(), run.method.scored_tasks(run.params, run.stages)
        texts = set(data.sst_dev.texts) if "sst" in tasks else set()
        for task, pairs in (("quora", data.quora_dev), ("sts", data.sts_dev)):
            if task in tasks:
                texts.update(pairs.first + pairs.second)
        return sorted(texts)

    @classmethod
    def preflight(cls, run: Any, data_dir: Path) -> None:
        run.sources(data_dir).tasks()
