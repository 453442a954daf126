"""supcon against pytorch-metric-learning's SupConLoss on the same inputs."""

import pytest
import torch

from harness.losses import supcon


@pytest.mark.parametrize("views", [1, 2, 3])
@pytest.mark.parametrize("tau", [0.07, 0.5])
def test_equals_pytorch_metric_learning(views: int, tau: float) -> None:
    torch.manual_seed(views)
    features = torch.randn(12, views, 24)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 3, 3, 4, 0, 1, 5])  # label 5 alone: no positive with 1 view
    flat = features.reshape(12 * views, 24)
    pml_losses = pytest.importorskip("pytorch_metric_learning.losses")  # here: not in every xdist worker
    expected = pml_losses.SupConLoss(temperature=tau)(flat, labels.repeat_interleave(views))
    assert float(supcon(features, labels, tau)) == pytest.approx(float(expected), rel=1e-5)


def test_views_of_one_sentence_are_positives() -> None:
    same = torch.tensor([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])
    labels = torch.tensor([0, 1])  # distinct sentences: positives are only their own other view
    crossed = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])  # views disagree
    assert float(supcon(same, labels, 0.1)) < 1e-3 < float(supcon(crossed, labels, 0.1))


def _by_hand(features: torch.Tensor, labels: torch.Tensor, tau: float) -> float:
    """SupCL-Seq eq. 2 on L2-normalised views, averaged over anchors, written out with loops."""
    batch, views, _ = features.shape
    z = [features[b, v] / features[b, v].norm() for b in range(batch) for v in range(views)]
    y = [int(labels[b]) for b in range(batch) for _ in range(views)]
    total = 0.0
    for i in range(len(z)):
        others = [b for b in range(len(z)) if b != i]
        denominator = sum(float(torch.exp(z[i] @ z[b] / tau)) for b in others)
        positives = [p for p in others if y[p] == y[i]]
        total += -sum(float(torch.log(torch.exp(z[i] @ z[p] / tau) / denominator)) for p in positives) / len(
            positives
        )
    return total / len(z)


def test_equals_the_papers_formula_by_hand_and_the_authors_scale() -> None:
    torch.manual_seed(0)
    features, labels = torch.randn(4, 3, 5), torch.tensor([0, 1, 0, 1])
    assert float(supcon(features, labels, 0.05)) == pytest.approx(_by_hand(features, labels, 0.05), rel=1e-5)
    scaled = supcon(features, labels, 0.05, base_temperature=0.07)  # the authors' code: x tau / 0.07
    assert float(scaled) == pytest.approx(_by_hand(features, labels, 0.05) * 0.05 / 0.07, rel=1e-5)
