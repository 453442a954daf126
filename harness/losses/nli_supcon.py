"""Losses, each a plain function whose docstring states its formula and source."""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F


def _first_k(mask: torch.Tensor, k: torch.Tensor | int | None) -> torch.Tensor:
    """Keep, in each row, only the first `k` True entries of `mask` (all when k is None)."""
    if k is None:
        return mask
    return mask & (mask.cumsum(dim=1) <= k)


def nli_supervised_contrastive(
    anchors: torch.Tensor,
    candidates: torch.Tensor,
    owner: torch.Tensor,
    positive: torch.Tensor,
    temperature: float,
    max_positives: int | None = None,
    max_negatives: int | None = None,
    normalize: bool = False,
) -> torch.Tensor:
    """Supervised contrastive loss over NLI groups (Liao, "Sentence Embeddings using Supervised
    Contrastive Learning", eq. 2; after Khosla et al. 2020).

    Anchor i is a premise; candidate j is a hypothesis. Positives P(i): the hypotheses of premise i
    labelled entailment. Negatives N(i): premise i's neutral / contradiction hypotheses first, then the
    hypotheses of every other premise in the batch. With s_ij = phi(x_i) . phi(x_j) / tau, phi the
    sentence embedding itself (Liao eq. 2: the raw dot product, no normalisation; the authors' code the
    same, Danqi7/584-final@0e40add bert_sent_embed.py:134-135; the tau ablation, best at tau = 1.0,
    relies on it); `normalize` L2-normalises first (cosine similarity, a variant):

        L_i = -1/|P(i)| * sum_{j in P(i)} log( exp(s_ij) / sum_{k in P(i) u N(i)} exp(s_ik) )

    and the loss is the mean of L_i over anchors with at least one positive. `max_positives` /
    `max_negatives` cap |P(i)| and |N(i)| (Liao's N+ / N-: "3p3n" is 3 / 3, "allpalln" is None / None),
    keeping the first ones in batch order.

    Args: anchors [A, d]; candidates [M, d]; owner [M] (index of each hypothesis's premise);
    positive [M] (bool, entailment).
    """
    if normalize:
        anchors, candidates = F.normalize(anchors, dim=-1), F.normalize(candidates, dim=-1)
    logits = anchors.float() @ candidates.float().T / temperature
    own = owner.unsqueeze(0) == torch.arange(anchors.shape[0], device=owner.device).unsqueeze(1)
    pos = _first_k(own & positive.unsqueeze(0), max_positives)
    own_neg = _first_k(own & ~positive.unsqueeze(0), max_negatives)
    other = ~own
    if max_negatives is not None:
        other = _first_k(other, max_negatives - own_neg.sum(dim=1, keepdim=True))
    kept = pos | own_neg | other
    log_denominator = torch.logsumexp(logits.masked_fill(~kept, float("-inf")), dim=1, keepdim=True)
    log_prob = torch.where(pos, logits - log_denominator, torch.zeros_like(logits))
    n_pos = pos.sum(dim=1)
    per_anchor = -log_prob.sum(dim=1) / n_pos.clamp(min=1)
    has_pos = (n_pos > 0).float()
    return (per_anchor * has_pos).sum() / has_pos.sum().clamp(min=1.0)


def parse_selection(selection: str) -> tuple[int | None, int | None]:
    """Liao's N+/N- names: '3p3n' -> (3, 3), '3palln' -> (3, None), 'allpalln' -> (None, None)."""
    match = re.fullmatch(r"(all|\d+)p(all|\d+)n", selection)
    if not match:
        raise ValueError(
            f"selection {selection!r} is not of the form <N|all>p<N|all>n, e.g. 3p3n or allpalln"
        )
    pos, neg = match.groups()
    return (None if pos == "all" else int(pos)), (None if neg == "all" else int(neg))
