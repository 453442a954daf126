import math

import pytest
import torch

from harness.losses import binary_cross_entropy, cross_entropy, mse, paired_info_nce


def test_paired_info_nce_by_hand() -> None:
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    second = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    # pair 0 (paraphrase): cos to candidates (1, 1); pair 1 (not): cos (0, 0)
    l0 = -math.log(math.e / (math.e + math.e))
    l1 = -math.log(1 / 2)
    got = paired_info_nce(first, second, torch.tensor([1, 0]), temperature=1.0)
    assert float(got) == pytest.approx((l0 - l1) / 2)


def test_paired_info_nce_pulls_paraphrases_and_pushes_the_rest() -> None:
    """An asymmetric example (Chen 4.1): the paraphrase pair's term enters with +, the non-paraphrase
    pair's with -, so the loss is not 0 and flipping the sign changes it."""
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    second = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    # pair 0 (paraphrase): cos to candidates (0.6, 1.0); pair 1 (not): cos (0.8, 0.0)
    l0 = -math.log(math.exp(0.6) / (math.exp(0.6) + math.e))
    l1 = -math.log(1 / (math.exp(0.8) + 1))
    got = paired_info_nce(first, second, torch.tensor([1, 0]), temperature=1.0)
    assert float(got) == pytest.approx((l0 - l1) / 2)
    assert float(got) == pytest.approx(-0.1290, abs=1e-4)  # l0 = 0.9130, l1 = 1.1711
    swapped = paired_info_nce(first, second, torch.tensor([0, 1]), temperature=1.0)
    assert float(swapped) == pytest.approx((l1 - l0) / 2)


def test_paired_info_nce_divides_by_the_temperature() -> None:
    """At tau = 0.5 every similarity is doubled before the softmax (s / tau, Chen 4.1 after SimCSE)."""
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    second = torch.tensor([[0.6, 0.8], [1.0, 0.0]])
    l0 = -math.log(math.exp(1.2) / (math.exp(1.2) + math.exp(2.0)))
    l1 = -math.log(1 / (math.exp(1.6) + 1))
    got = paired_info_nce(first, second, torch.tensor([1, 0]), temperature=0.5)
    assert float(got) == pytest.approx((l0 - l1) / 2)


def test_task_losses() -> None:
    assert float(mse(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 1.0]))) == pytest.approx(2.5)
    logits = torch.tensor([[0.0, math.log(3.0)]])
    assert float(cross_entropy(logits, torch.tensor([1]))) == pytest.approx(-math.log(0.75))
    # sigmoid(log 3) = 0.75: target 1 costs -log 0.75, target 0 costs -log 0.25; mean of the two
    got = binary_cross_entropy(torch.tensor([math.log(3.0), math.log(3.0)]), torch.tensor([1.0, 0.0]))
    assert float(got) == pytest.approx((-math.log(0.75) - math.log(0.25)) / 2)
