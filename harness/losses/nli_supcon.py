"""Losses, each a plain function whose docstring states its formula and source."""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from harness.choices import Anchors, Draw  # named once, torch-free
from harness.fields import parse_selection  # noqa: F401  (re-exported: harness.losses.parse_selection)


def _first_k(mask: torch.Tensor, k: torch.Tensor | int | None) -> torch.Tensor:
    """Keep, in each row, only the first `k` True entries of `mask` (all when k is None)."""
    if k is None:
        return mask
    return mask & (mask.cumsum(dim=1) <= k)


def _random_k(mask: torch.Tensor, k: int | None, generator: torch.Generator | None) -> torch.Tensor:
    """Keep, in each row, `k` of the True entries of `mask` drawn uniformly without replacement (all
    when k is None or the row has no more): the k smallest of uniform keys over the eligible entries."""
    if k is None:
        return mask
    keys = torch.rand(mask.shape, generator=generator).to(mask.device).masked_fill(~mask, 2.0)
    rank = keys.argsort(dim=1).argsort(dim=1)
    return mask & (rank < k)


class Selection(NamedTuple):
    """Liao's anchors and what each one is compared with: `premise` [R], the premise of each anchor;
    `positive`, `negative` [R, M], the candidates kept as its positives P(i) and negatives N(i)."""

    premise: torch.Tensor
    positive: torch.Tensor
    negative: torch.Tensor


def select_candidates(
    owner: torch.Tensor,
    positive: torch.Tensor,
    n_premises: int,
    max_positives: int | None = None,
    max_negatives: int | None = None,
    *,
    anchor_per: Anchors,
    draw: Draw,
    generator: torch.Generator | None = None,
) -> Selection:
    """Liao's anchors with their positives and negatives among the batch's hypotheses (Liao 3 and
    Table 2's N+ / N-; shared by L_SCL and the Augment baseline's cross-entropy).

    Candidate j is a hypothesis of premise owner[j]. An anchor is a premise:
    - `anchor_per="entailment_row"`: one anchor per entailment (premise, hypothesis) row, that row's
      hypothesis always among its positives (the authors' code, Danqi7/584-final@994712c
      bert_sent_embed.py:114-168: a loop over entailment rows, `scores` starts with the row's own
      hypothesis). Liao 3 "treat each premise as one single anchor sentence" for "a batch of input
      sentence pairs" does not say whether a premise with two entailment rows is one anchor or two; the
      code decides.
    - `anchor_per="premise"`: one anchor per distinct premise (`n_premises` of them).
    Positives P(i): entailment hypotheses of the anchor's premise. Negatives N(i): every other
    hypothesis in the batch (the premise's neutral / contradiction ones and all hypotheses of other
    premises; Liao 3 and the code's `np.delete(candidates, entailment_idxs)`).
    `max_positives` / `max_negatives` cap |P(i)| and |N(i)| (Liao's N+ / N-: "3p3n" is 3 / 3,
    "allpalln" is None / None). Which ones: `draw="random"`, uniformly without replacement (the code at
    994712c, `np.random.choice(..., replace=False)`; the paper does not say); `draw="first"`, in batch
    order with the premise's own neutral / contradiction hypotheses first (an earlier harness variant).

    Args: owner [M] (index of each hypothesis's premise); positive [M] (bool, entailment); `generator`
    (CPU) for the random draws.
    """
    if anchor_per == "entailment_row":
        rows = positive.nonzero().squeeze(1)
        premise = owner[rows]
        must = torch.zeros(len(rows), len(owner), dtype=torch.bool, device=owner.device)
        must[torch.arange(len(rows), device=owner.device), rows] = True
    else:
        premise = torch.arange(n_premises, device=owner.device)
        must = torch.zeros(len(premise), len(owner), dtype=torch.bool, device=owner.device)
    own = owner.unsqueeze(0) == premise.unsqueeze(1)
    entailed = own & positive.unsqueeze(0)
    spare = None if max_positives is None else max_positives - int(anchor_per == "entailment_row")
    if draw == "random":
        pos = must | _random_k(entailed & ~must, spare, generator)
        neg = _random_k(~entailed, max_negatives, generator)
    else:
        pos = must | _first_k(entailed & ~must, spare)
        own_neg = _first_k(own & ~positive.unsqueeze(0), max_negatives)
        left = None if max_negatives is None else max_negatives - own_neg.sum(dim=1, keepdim=True)
        neg = own_neg | _first_k(~own, left)
    return Selection(premise, pos, neg)


def nli_supervised_contrastive(
    anchors: torch.Tensor,
    candidates: torch.Tensor,
    owner: torch.Tensor,
    positive: torch.Tensor,
    temperature: float,
    max_positives: int | None = None,
    max_negatives: int | None = None,
    normalize: bool = False,
    *,
    anchor_per: Anchors,
    draw: Draw,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Supervised contrastive loss over NLI groups (Liao, "Sentence Embeddings using Supervised
    Contrastive Learning", eq. 2; after Khosla et al. 2020).

    Anchors i, positives P(i) and negatives N(i): `select_candidates` (anchors, caps and draws). With
    s_ij = phi(x_i) . phi(x_j) / tau, phi the sentence embedding itself (Liao eq. 2: the raw dot
    product; code `bert_sent_embed.py:134-135` @0e40add the same); `normalize` L2-normalises first:

        L_i = -1/|P(i)| * sum_{j in P(i)} log( exp(s_ij) / sum_{k in P(i) u N(i)} exp(s_ik) )

    and the loss is the mean of L_i over anchors with at least one positive (`SCLLoss / SCL_cnt`).

    Args: anchors [A, d] (one per premise); candidates [M, d]; owner [M] (index of each hypothesis's
    premise); positive [M] (bool, entailment); `generator` (CPU) for the random draws.
    """
    if normalize:
        anchors, candidates = F.normalize(anchors, dim=-1), F.normalize(candidates, dim=-1)
    chosen = select_candidates(owner, positive, anchors.shape[0], max_positives, max_negatives,
                               anchor_per=anchor_per, draw=draw, generator=generator)  # fmt: skip
    logits = anchors.float()[chosen.premise] @ candidates.float().T / temperature
    pos = chosen.positive
    kept = pos | chosen.negative
    log_denominator = torch.logsumexp(logits.masked_fill(~kept, float("-inf")), dim=1, keepdim=True)
    log_prob = torch.where(pos, logits - log_denominator, torch.zeros_like(logits))
    n_pos = pos.sum(dim=1)
    per_anchor = -log_prob.sum(dim=1) / n_pos.clamp(min=1)
    has_pos = (n_pos > 0).float()
    return (per_anchor * has_pos).sum() / has_pos.sum().clamp(min=1.0)
