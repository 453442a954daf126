"""Chen's paired-label contrastive loss for Quora: paraphrase pairs are positives, non-paraphrase pairs
negatives "whose contrastive loss is maximized instead" (Chen, section 4.1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def paired_info_nce(
    first: torch.Tensor, second: torch.Tensor, labels: torch.Tensor, temperature: float = 0.05
) -> torch.Tensor:
    """With l_i the SimCSE term of pair i over in-batch candidates,

        l_i = -log exp(s(a_i, b_i) / tau) / sum_j exp(s(a_i, b_j) / tau),

    L = (sum_{y_i = 1} l_i - sum_{y_i = 0} l_i) / N: paraphrase pairs are pulled together, non-paraphrase
    pairs pushed apart. Each l_i is bounded (cosine similarity), so the loss is too.

    Args: first, second [N, d]; labels [N] (1 = paraphrase).
    """
    logits = F.normalize(first.float(), dim=-1) @ F.normalize(second.float(), dim=-1).T / temperature
    per_pair = F.cross_entropy(logits, torch.arange(len(labels), device=logits.device), reduction="none")
    sign = torch.where(labels.bool(), 1.0, -1.0)
    return (sign * per_pair).mean()
