"""info_nce against sentence-transformers' MultipleNegativesRankingLoss (scale = 1 / tau)."""

import math

import pytest
import torch

from harness.losses import info_nce


def reference(
    anchors: torch.Tensor, positives: torch.Tensor, negatives: torch.Tensor | None, tau: float
) -> float:
    # imported here, not at collection: 2.6 s of CPU in every pytest-xdist worker, used by one
    losses = pytest.importorskip("sentence_transformers.sentence_transformer.losses")
    loss = losses.MultipleNegativesRankingLoss(model=None, scale=1.0 / tau)
    embeddings = [anchors, positives] + ([negatives] if negatives is not None else [])
    return float(loss.compute_loss_from_embeddings(embeddings, labels=None))


@pytest.mark.parametrize("tau", [0.05, 0.1, 1.0])
@pytest.mark.parametrize("with_negatives", [False, True])
def test_equals_multiple_negatives_ranking_loss(tau: float, with_negatives: bool) -> None:
    torch.manual_seed(0)
    anchors, positives, negatives = torch.randn(3, 16, 32).unbind(0)
    negatives = negatives if with_negatives else None
    ours = float(info_nce(anchors, positives, negatives, temperature=tau))
    assert ours == pytest.approx(reference(anchors, positives, negatives, tau), rel=1e-5)


def test_hard_negative_weight_by_hand() -> None:
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    negatives = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    w = 2.0
    # anchor 0: positives (1, 0), negatives (0 + w, 1); anchor 1: positives (0, 1), negatives (1, 0 + w)
    row = -math.log(math.e / (math.e + 1 + math.exp(w) + math.e))
    assert float(info_nce(anchors, positives, negatives, 1.0, hard_negative_weight=w)) == pytest.approx(row)
