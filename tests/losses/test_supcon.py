"""supcon against pytorch-metric-learning's SupConLoss on the same inputs."""

import pytest
import torch

from harness.losses import supcon

pml_losses = pytest.importorskip("pytorch_metric_learning.losses")


@pytest.mark.parametrize("views", [1, 2, 3])
@pytest.mark.parametrize("tau", [0.07, 0.5])
def test_equals_pytorch_metric_learning(views: int, tau: float) -> None:
    torch.manual_seed(views)
    features = torch.randn(12, views, 24)
    labels = torch.tensor([0, 1, 2, 0, 1, 2, 3, 3, 4, 0, 1, 5])  # label 5 alone: no positive with 1 view
    flat = features.reshape(12 * views, 24)
    expected = pml_losses.SupConLoss(temperature=tau)(flat, labels.repeat_interleave(views))
    assert float(supcon(features, labels, tau)) == pytest.approx(float(expected), rel=1e-5)


def test_views_of_one_sentence_are_positives() -> None:
    same = torch.tensor([[[1.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]])
    labels = torch.tensor([0, 1])  # distinct sentences: positives are only their own other view
    crossed = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]])  # views disagree
    assert float(supcon(same, labels, 0.1)) < 1e-3 < float(supcon(crossed, labels, 0.1))
