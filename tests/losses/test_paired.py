import math

import pytest
import torch

from harness.losses import cosine_mse, cross_entropy, mse, paired_info_nce


def test_paired_info_nce_by_hand() -> None:
    first = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    second = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    # pair 0 (paraphrase): cos to candidates (1, 1); pair 1 (not): cos (0, 0)
    l0 = -math.log(math.e / (math.e + math.e))
    l1 = -math.log(1 / 2)
    got = paired_info_nce(first, second, torch.tensor([1, 0]), temperature=1.0)
    assert float(got) == pytest.approx((l0 - l1) / 2)


def test_task_losses() -> None:
    assert float(mse(torch.tensor([1.0, 3.0]), torch.tensor([0.0, 1.0]))) == pytest.approx(2.5)
    u, v = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 2.0]])
    assert float(cosine_mse(u, v, torch.tensor([5.0]))) == pytest.approx(1.0)
    logits = torch.tensor([[0.0, math.log(3.0)]])
    assert float(cross_entropy(logits, torch.tensor([1]))) == pytest.approx(-math.log(0.75))
