"""Task heads on top of sentence embeddings."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn


class NLIClassifier(nn.Module):
    """Softmax classifier over (u, v, |u - v|) of premise / hypothesis embeddings (SBERT, Reimers and
    Gurevych 2019). `mlp` is the two-layer classifier Liao describes; `linear` is SBERT's single layer."""

    def __init__(self, hidden: int, kind: Literal["linear", "mlp"] = "mlp", n_classes: int = 3) -> None:
        super().__init__()
        if kind == "linear":
            self.net: nn.Module = nn.Linear(3 * hidden, n_classes)
        else:
            self.net = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([u, v, (u - v).abs()], dim=-1))
