"""Liao's Augment baselines' loss (harness.losses.nli_augment) on a hand-made batch: the classifier's mean
cross-entropy over exactly the (anchor premise, candidate) pairs L_SCL compares, with their labels."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from harness.losses import nli_augment

ENTAILMENT, NEUTRAL, CONTRADICTION = 0, 1, 2


def classifier(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """A fixed linear classifier over [u, v]: different logits for every pair."""
    weights = torch.arange(12, dtype=torch.float32).reshape(4, 3) / 10 - 0.5
    return torch.cat([u, v], dim=-1) @ weights


def test_pairs_and_labels_by_hand() -> None:
    """Premise 0 has an entailment and a contradiction hypothesis; premise 1 a neutral and a
    contradiction one, no positive. Anchor 0 is compared with all four hypotheses: its own keep their
    gold labels, premise 1's are labelled contradiction; premise 1, with no positive, gives no pair
    (L_SCL ignores it). The loss is the mean over those four pairs."""
    premises = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    hypotheses = torch.tensor([[1.0, 1.0], [-1.0, 0.5], [0.3, -0.7], [2.0, 0.1]])
    owner = torch.tensor([0, 0, 1, 1])
    labels = torch.tensor([ENTAILMENT, CONTRADICTION, NEUTRAL, CONTRADICTION])
    got = nli_augment.nli_augmented_cross_entropy(
        classifier, premises, hypotheses, owner, labels, None, None,
        anchor_per="premise", draw="first", entailment=ENTAILMENT, contradiction=CONTRADICTION,
    )  # fmt: skip
    logits = classifier(premises[[0, 0, 0, 0]], hypotheses)
    expected = F.cross_entropy(
        logits, torch.tensor([ENTAILMENT, CONTRADICTION, CONTRADICTION, CONTRADICTION])
    )
    assert float(got) == pytest.approx(float(expected), rel=1e-6)
    assert float(got) != float(F.cross_entropy(logits, labels))  # premise 1's own labels would differ
