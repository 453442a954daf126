"""CS224N multi-task scores on the dev sets: SST-5 accuracy, Quora accuracy, STS Pearson r.

"Overall" is reported both ways the papers define it:
    overall       = (acc_sst + acc_quora + r) / 3                 (Chen)
    overall_r01   = (acc_sst + acc_quora + (r + 1) / 2) / 3       (David et al.)
Scores are fractions (0-1), as the papers print them.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import pearsonr

from harness.data.cs224n import MultitaskData
from harness.evaluate.suite import SentenceEncoder


def _tensor(embeddings: dict[str, np.ndarray], texts: list[str], device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.stack([embeddings[t] for t in texts])).to(device)


@torch.inference_mode()
def evaluate_multitask(
    method: torch.nn.Module, data: MultitaskData, encode: SentenceEncoder, tasks: tuple[str, ...]
) -> dict[str, float]:
    """Dev scores of `method`'s heads (`sentiment`, `pairs`) for `tasks`; both overalls with all three."""
    was_training = method.training
    method.eval()
    try:
        sentences = set()
        if "sst" in tasks:
            sentences.update(data.sst_dev.texts)
        for task, pairs in (("quora", data.quora_dev), ("sts", data.sts_dev)):
            if task in tasks:
                sentences.update(pairs.first + pairs.second)
        emb = encode(sorted(sentences))
        device = next(method.parameters()).device
        scores: dict[str, float] = {}
        if "sst" in tasks:
            logits = method.sentiment(_tensor(emb, data.sst_dev.texts, device))
            scores["sst.acc"] = float((logits.argmax(-1).cpu().numpy() == data.sst_dev.labels).mean())
        if "quora" in tasks:
            u, v = (_tensor(emb, t, device) for t in (data.quora_dev.first, data.quora_dev.second))
            predicted = (method.pairs.paraphrase_logit(u, v) > 0).cpu().numpy()
            scores["quora.acc"] = float((predicted == data.quora_dev.targets.astype(bool)).mean())
        if "sts" in tasks:
            u, v = (_tensor(emb, t, device) for t in (data.sts_dev.first, data.sts_dev.second))
            predicted = method.pairs.similarity_score(u, v).float().cpu().numpy()
            scores["sts.pearson"] = float(pearsonr(predicted, data.sts_dev.targets).statistic)
        if len(scores) == 3:
            acc = scores["sst.acc"] + scores["quora.acc"]
            scores["overall"] = (acc + scores["sts.pearson"]) / 3
            scores["overall_r01"] = (acc + (scores["sts.pearson"] + 1) / 2) / 3
        return scores
    finally:
        method.train(was_training)
