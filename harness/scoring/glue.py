"""`glue`: a GLUE task's dev split (test labels are not public; MNLI: the matched one), scored as GLUE
reports it (Wang et al., 2018), x 100: Matthews correlation for CoLA, F1 and accuracy for MRPC and QQP,
Pearson and Spearman for STS-B, accuracy for the others (F1: the positive class 1, as GLUE). The task is
that of the pipeline's last `glue` stage, read from the run's GLUE source (harness.data.glue_source); the
dev score is the task's first metric unless `objective_metric` names another. The final evaluation keeps
each dev example's prediction beside its gold value (protocol `glue`, harness.stats.items)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.data.glue import GlueSplit, glue_task
from harness.scoring.registry import Scorer, register_scorer
from harness.stages.glue import glue_outputs

if TYPE_CHECKING:  # torch, scipy and scikit-learn are imported where a trial is scored
    import torch


def glue_stage_task(run: Any) -> str:
    return [s.glue for s in run.stages if s.kind == "glue"][-1]


def glue_scores(task: str, predictions: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Every metric of `task` x 100 (`predictions`: class indices, or scores for regression). Correlations
    in float64: scipy computes Pearson's r of two float32 arrays (STS-B's scores) in float32, ~1e-7 off."""
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import f1_score, matthews_corrcoef

    scores, targets = np.asarray(predictions, np.float64), np.asarray(gold, np.float64)
    metric = {
        "acc": lambda: float(np.mean(predictions == gold)),
        "f1": lambda: float(f1_score(gold, predictions)),
        "mcc": lambda: float(matthews_corrcoef(gold, predictions)),
        "pearson": lambda: float(pearsonr(scores, targets).statistic),
        "spearman": lambda: float(spearmanr(scores, targets).statistic),
    }
    return {f"{task}.{name}": 100 * metric[name]() for name in glue_task(task).metrics}


def glue_predictions(
    model: Any, task: str, split: GlueSplit, batch_size: int, amp_dtype: torch.dtype | None = None
) -> np.ndarray:
    """Class indices (or scores) for every example, in eval mode, under the trial's autocast dtype;
    `model` is the pipeline's (its `context()`: the encoder and the task's head)."""
    import torch

    from harness.device import autocast

    was_training = model.training
    model.eval()
    ctx = model.context()
    try:
        with torch.inference_mode(), autocast(ctx.encoder.device, amp_dtype):
            starts = range(0, len(split), batch_size)
            outputs = [glue_outputs(ctx, task, split, list(range(i, min(i + batch_size, len(split)))))
                       for i in starts]  # fmt: skip
    finally:
        model.train(was_training)
    stacked = torch.cat(outputs).float().cpu()
    return stacked[:, 0].numpy() if glue_task(task).labels is None else stacked.argmax(-1).numpy()


@register_scorer("glue")
class GlueScorer(Scorer):
    @classmethod
    def metric_choices(cls, run: Any) -> tuple[str, ...]:
        task = glue_stage_task(run)
        return tuple(f"{task}.{m}" for m in glue_task(task).metrics)

    @functools.cached_property
    def task(self) -> str:
        return glue_stage_task(self.run)

    def scores(self) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
        """(the scores, the predictions, the gold values) of the dev split."""
        dev = self.run.sources(self.data_dir).glue(self.task, "dev")
        amp = self.encode.amp_dtype if self.encode is not None else None
        predictions = glue_predictions(self.model, self.task, dev, self.run.settings.eval_batch_size, amp)
        return glue_scores(self.task, predictions, dev.targets), predictions, dev.targets

    def dev_scores(self) -> dict[str, float]:
        return self.scores()[0]

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        from harness.stats.items import item_rows

        scores, predictions, gold = self.scores()
        self.final_items = item_rows(self.task, "glue", predictions, gold)
        return {f"dev.{k}": v for k, v in scores.items()}, {
            "scores": scores,
            "predictions": predictions.tolist(),
        }

    @classmethod
    def dev_texts(cls, run: Any, data_dir: Path) -> list[str]:
        """One text per dev example (a pair is encoded jointly: its two sentences as one input)."""
        dev = run.sources(data_dir).glue(glue_stage_task(run), "dev")
        second = dev.second or [""] * len(dev)
        return [f"{a} {b}".strip() for a, b in zip(dev.first, second, strict=True)]

    @classmethod
    def preflight(cls, run: Any, data_dir: Path) -> None:
        run.sources(data_dir).glue(glue_stage_task(run), "dev")
