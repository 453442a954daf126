"""Task losses of the CS224N multi-task setting."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean of -log softmax(logits)[label] (SST-5 sentiment; paraphrase as 2 classes)."""
    return F.cross_entropy(logits.float(), labels)


def mse(predicted: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Mean of (predicted - gold)^2 (STS regression on the 0-5 scale)."""
    return F.mse_loss(predicted.float(), gold.float())


def binary_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean of -[y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))] (Quora paraphrase as one logit)."""
    return F.binary_cross_entropy_with_logits(logits.float(), targets.float())
