"""CS224N multi-task scores on the dev sets: SST-5 accuracy, Quora accuracy, STS Pearson r.

"Overall" is reported both ways the papers define it:
    overall       = (acc_sst + acc_quora + r) / 3                 (Chen)
    overall_r01   = (acc_sst + acc_quora + (r + 1) / 2) / 3       (David et al.)
Scores are fractions (0-1), as the papers print them. Predictions (SST class probabilities, Quora
paraphrase probabilities, STS scores) are kept apart from scoring so that an ensemble can combine them.
What each dev item is scored on (`decisions`: the SST class, the Quora decision, the STS score) is also
the final evaluation's per-item record (protocol `cs224n`, harness.stats.items).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from scipy.stats import pearsonr

from harness.data.cs224n import MultitaskData
from harness.evaluate.suite import SentenceEncoder

if TYPE_CHECKING:
    import pandas as pd

    from harness.networks.tasks import TaskModel

Predictions = dict[str, np.ndarray]


def _tensor(embeddings: dict[str, np.ndarray], texts: list[str], device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.stack([embeddings[t] for t in texts])).to(device)


@torch.inference_mode()
def predict_multitask(
    method: TaskModel, data: MultitaskData, encode: SentenceEncoder, tasks: tuple[str, ...]
) -> Predictions:
    """Dev-set predictions of `method`'s heads (`sentiment`, `pairs`) for `tasks`."""
    was_training = method.training
    method.eval()
    try:
        sentences: set[str] = set(data.sst_dev.texts) if "sst" in tasks else set()
        for task, pairs in (("quora", data.quora_dev), ("sts", data.sts_dev)):
            if task in tasks:
                sentences.update(pairs.first + pairs.second)
        emb = encode(sorted(sentences))
        device = next(method.parameters()).device
        out: Predictions = {}
        if "sst" in tasks:
            assert method.sentiment is not None
            logits = method.sentiment(_tensor(emb, data.sst_dev.texts, device))
            out["sst"] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        heads = method.pairs  # none on a sentiment-only model, which scores SST alone
        if "quora" in tasks:
            assert heads is not None
            u, v = (_tensor(emb, t, device) for t in (data.quora_dev.first, data.quora_dev.second))
            out["quora"] = torch.sigmoid(heads.paraphrase_logit(u, v).float()).cpu().numpy()
        if "sts" in tasks:
            assert heads is not None
            u, v = (_tensor(emb, t, device) for t in (data.sts_dev.first, data.sts_dev.second))
            out["sts"] = heads.similarity_score(u, v).float().cpu().numpy()
        return out
    finally:
        method.train(was_training)


def decisions(predictions: Predictions, data: MultitaskData) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per task present, (what each dev item is scored on, its gold value): the SST class (the argmax of
    its probabilities) vs the label, the Quora decision (probability > 0.5) vs the label as a bool, the
    STS score vs the gold score."""
    out = {}
    if "sst" in predictions:
        out["sst"] = (predictions["sst"].argmax(-1), data.sst_dev.labels)
    if "quora" in predictions:
        out["quora"] = (predictions["quora"] > 0.5, data.quora_dev.targets.astype(bool))
    if "sts" in predictions:
        out["sts"] = (predictions["sts"], data.sts_dev.targets)
    return out


def score_predictions(predictions: Predictions, data: MultitaskData) -> dict[str, float]:
    """Accuracy / Pearson per task present, and both overalls when all three are."""
    scores: dict[str, float] = {}
    for task, (predicted, gold) in decisions(predictions, data).items():
        if task == "sts":
            scores["sts.pearson"] = float(pearsonr(predicted, gold).statistic)
        else:
            scores[f"{task}.acc"] = float((predicted == gold).mean())
    if len(scores) == 3:
        acc = scores["sst.acc"] + scores["quora.acc"]
        scores["overall"] = (acc + scores["sts.pearson"]) / 3
        scores["overall_r01"] = (acc + (scores["sts.pearson"] + 1) / 2) / 3
    return scores


def multitask_items(predictions: Predictions, data: MultitaskData) -> pd.DataFrame:
    """The dev items' record (protocol `cs224n`): per task, each item's decision beside its gold value."""
    from harness.stats.items import concat_items, item_rows

    decided = decisions(predictions, data)
    return concat_items([item_rows(task, "cs224n", p, g) for task, (p, g) in decided.items()])
