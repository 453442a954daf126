"""Liao's "Augment" baselines (3p3n-Augment, allpalln-Augment): cross-entropy over augmented NLI pairs."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from harness.losses.nli_supcon import Anchors, Draw, select_candidates


def nli_augmented_cross_entropy(
    classifier: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    anchors: torch.Tensor,
    candidates: torch.Tensor,
    owner: torch.Tensor,
    labels: torch.Tensor,
    max_positives: int | None,
    max_negatives: int | None,
    *,
    anchor_per: Anchors,
    draw: Draw,
    entailment: int,
    contradiction: int,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The NLI classifier's cross-entropy over the (anchor premise, candidate hypothesis) pairs that
    L_SCL would compare (Liao Table 2 caption: "trained on augmented anchor, positive and negative
    sentences using pure cross-entropy loss"; 4.4: "3p3n-lambda0.5-SCL and 3p3n-Augment have the same
    amount of augmented positive and negative sentences"):

        L_aug = 1/|S| * sum_{(i, j) in S} -log softmax(classifier(u_p(i), v_j))[y_ij]
        S = {(i, j) : j in P(i) u N(i), |P(i)| > 0},
        y_ij = the gold label of (p(i), j) when j is a hypothesis of p(i), else contradiction

    with anchors i, their premises p(i), positives P(i) and negatives N(i) from `select_candidates` (the
    same anchors, caps and draw as `nli_supervised_contrastive`; anchors without a positive, which L_SCL
    ignores, give no pair), u the premise embeddings, v the hypothesis embeddings. 0 when S is empty.

    An interpretation: the paper gives no labels for the augmented pairs and the authors' repository
    has no code for it (Danqi7/584-final@994712c README.md:5 only lists "AUG#1: lambda: 0.5, temperature
    N/A, pos:3, neg:3"). A pair the data labels keeps its label (positives: entailment; the premise's own
    neutral and contradiction hypotheses: theirs, so L_CE and L_aug never disagree on a pair); another
    premise's hypothesis, which L_SCL pushes apart from the anchor, is labelled contradiction.

    Args: classifier (u, v) -> logits [n, classes]; anchors [A, d] (one per premise); candidates [M, d];
    owner [M] (index of each hypothesis's premise); labels [M] (each hypothesis's gold class; `entailment`
    marks positives); `contradiction`: the class of another premise's hypothesis; `generator` (CPU) for
    the random draws.
    """
    chosen = select_candidates(owner, labels == entailment, anchors.shape[0], max_positives, max_negatives,
                               anchor_per=anchor_per, draw=draw, generator=generator)  # fmt: skip
    pairs = (chosen.positive | chosen.negative) & chosen.positive.any(dim=1, keepdim=True)
    anchor, candidate = pairs.nonzero(as_tuple=True)
    own = owner[candidate] == chosen.premise[anchor]
    target = torch.where(own, labels[candidate], torch.full_like(candidate, contradiction))
    logits = classifier(anchors[chosen.premise[anchor]], candidates[candidate])
    return F.cross_entropy(logits.float(), target, reduction="sum") / max(len(target), 1)
