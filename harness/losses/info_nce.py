"""InfoNCE over in-batch negatives: SimCSE (Gao et al., 2021, eqs. 1 and 5)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def info_nce(
    anchors: torch.Tensor,
    positives: torch.Tensor,
    negatives: torch.Tensor | None = None,
    temperature: float = 0.05,
    hard_negative_weight: float = 0.0,
) -> torch.Tensor:
    """SimCSE's contrastive loss with cosine similarity s(a, b) = a.b / (|a| |b|):

        l_i = -log exp(s(h_i, h_i+) / tau) / Z_i,
        Z_i = sum_j exp(s(h_i, h_j+) / tau) + sum_j exp(s(h_i, h_j-) / tau + w [i = j])

    averaged over the batch. Unsupervised SimCSE: `positives` is a second dropout pass of the anchors.
    Supervised SimCSE: entailment hypotheses as positives, contradictions as `negatives` (hard negatives of
    every anchor in the batch); `hard_negative_weight` w is SimCSE's log-space weight added to each anchor's
    own hard negative (0 = none). With w = 0 this is sentence-transformers' MultipleNegativesRankingLoss
    with scale = 1 / tau.

    Args: anchors, positives [N, d]; negatives [N, d] or None.
    """
    candidates = positives if negatives is None else torch.cat([positives, negatives], dim=0)
    logits = F.normalize(anchors.float(), dim=-1) @ F.normalize(candidates.float(), dim=-1).T / temperature
    n = anchors.shape[0]
    if negatives is not None and hard_negative_weight:
        own_negative = torch.zeros_like(logits)
        own_negative[:, n:] = torch.eye(n, device=logits.device) * hard_negative_weight
        logits = logits + own_negative
    return F.cross_entropy(logits, torch.arange(n, device=logits.device))
