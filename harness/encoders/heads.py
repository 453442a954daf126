"""Task heads on top of sentence embeddings."""

from __future__ import annotations

from typing import Literal, cast

import torch
import torch.nn.functional as F
from torch import nn

from harness.choices import NLIHead, ParaphraseHead, SimilarityHead  # named once, torch-free


class NLIClassifier(nn.Module):
    """Softmax classifier over (u, v, |u - v|) of premise / hypothesis embeddings (SBERT, Reimers and
    Gurevych 2019).

    - `two_linear`: Liao's "two-layer softmax classifier" (3): the paper names neither width nor
      activation, the authors' code has Linear(3h, 3h/2) then Linear(3h/2, classes) with nothing between
      (Danqi7/584-final@0e40add models.py:25-26, :51-52; bert_sent_embed.py:270 passes 3h).
    - `linear`: SBERT's single layer.
    - `mlp`: Linear(3h, h), ReLU, Linear(h, classes).
    """

    def __init__(self, hidden: int, kind: NLIHead = "two_linear", n_classes: int = 3) -> None:
        super().__init__()
        if kind == "linear":
            self.net: nn.Module = nn.Linear(3 * hidden, n_classes)
        elif kind == "two_linear":
            width = 3 * hidden // 2
            self.net = nn.Sequential(nn.Linear(3 * hidden, width), nn.Linear(width, n_classes))
        else:
            self.net = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self.net(torch.cat([u, v, (u - v).abs()], dim=-1))


def mlp(hidden: int, dropout: float, layers: int = 2) -> nn.Sequential:
    """`layers` Linear(hidden, hidden) blocks with dropout before each and ReLU between (Chen: 2 layers,
    hidden 768, dropout 0.3)."""
    blocks: list[nn.Module] = []
    for index in range(layers):
        blocks += [nn.Dropout(dropout), nn.Linear(hidden, hidden)]
        if index < layers - 1:
            blocks.append(nn.ReLU())
    return nn.Sequential(*blocks)


class SentimentHead(nn.Module):
    """SST-5 logits from one sentence embedding: `linear` (dropout, Linear(h, 5); Phillips 3.2), or `mlp`,
    Chen's "small (2-layer) MLP network with dropout" (4.2) with "a hidden dimension of 768 and dropout
    probability of 0.3 at each linear layer" (5.3): dropout, Linear(h, h), ReLU, dropout, Linear(h, 5)."""

    def __init__(self, hidden: int, kind: Literal["linear", "mlp"] = "linear", dropout: float = 0.1,
                 n_classes: int = 5) -> None:  # fmt: skip
        super().__init__()
        body = [*mlp(hidden, dropout, layers=1), nn.ReLU()] if kind == "mlp" else []
        self.net = nn.Sequential(*body, nn.Dropout(dropout), nn.Linear(hidden, n_classes))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return self.net(u)


class PairHeads(nn.Module):
    """Paraphrase logit and STS score (0-5) from two sentence embeddings (Chen Table 3, David et al. 5.4,
    Phillips 3.2).

    Each task first transforms u and v: `pair_layers` 0 (identity) or 2 (MLP), with `sharing`
    `separate` (one MLP per task), `first_layer` (the first Linear shared by both tasks) or `shared`
    (one MLP for both). Then
      paraphrase `linear`: w . [u, v] + b;  `bilinear`: u^T W v + b;  `cosine`: a cos(u, v) + b (a, b learnt);
        `plain_cosine`: cos(u, v) itself, no parameters (Chen 4.3's unsupervised baseline: "a cosine
        similarity function ... without introducing additional layers or parameters"; p = sigmoid(cos))
      similarity `cosine`: 5 cos(u, v);  `relu_cosine`: 5 ReLU(cos(u, v)) (Phillips);
        `linear`: w . [u, v] + b, a regression on the pair (David et al. 5.4, "linear layers for our
        predict similarity"; dropout first, as the linear paraphrase head).
    """

    def __init__(
        self,
        hidden: int,
        paraphrase: ParaphraseHead = "linear",
        similarity: SimilarityHead = "cosine",
        pair_layers: Literal[0, 2] = 0,
        sharing: Literal["separate", "first_layer", "shared"] = "separate",
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.para_transform, self.sts_transform = self._transforms(hidden, pair_layers, sharing, dropout)
        self.paraphrase, self.similarity = paraphrase, similarity
        # Phillips 3.2: "concatenate the embeddings, and apply dropout and a single linear layer"; with
        # pair_layers the MLP's own dropout comes first instead
        self.para_dropout = nn.Dropout(dropout) if pair_layers == 0 else nn.Identity()
        if paraphrase == "linear":
            self.para_out: nn.Module = nn.Linear(2 * hidden, 1)
        elif paraphrase == "bilinear":
            self.para_out = nn.Bilinear(hidden, hidden, 1)
        elif paraphrase == "cosine":
            self.para_out = nn.Linear(1, 1)
        else:
            self.para_out = nn.Identity()
        self.sts_out = nn.Linear(2 * hidden, 1) if similarity == "linear" else None

    @staticmethod
    def _transforms(hidden: int, layers: int, sharing: str, dropout: float) -> tuple[nn.Module, nn.Module]:
        if layers == 0:
            return nn.Identity(), nn.Identity()
        if sharing == "shared":
            shared = mlp(hidden, dropout)
            return shared, shared
        if sharing == "first_layer":
            first = nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.ReLU())
            return (nn.Sequential(first, nn.Dropout(dropout), nn.Linear(hidden, hidden)),
                    nn.Sequential(first, nn.Dropout(dropout), nn.Linear(hidden, hidden)))  # fmt: skip
        return mlp(hidden, dropout), mlp(hidden, dropout)

    def paraphrase_logit(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        u, v = self.para_transform(u), self.para_transform(v)
        if self.paraphrase == "linear":
            return self.para_out(self.para_dropout(torch.cat([u, v], dim=-1))).squeeze(-1)
        if self.paraphrase == "bilinear":  # autocast does not cover nn.Bilinear: give it its own dtype
            dtype = cast(nn.Bilinear, self.para_out).weight.dtype
            return self.para_out(u.to(dtype), v.to(dtype)).squeeze(-1)
        return self.para_out(F.cosine_similarity(u, v, dim=-1).unsqueeze(-1)).squeeze(-1)  # cosine, plain

    def similarity_score(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.sts_out is not None:
            pair = torch.cat([self.sts_transform(u), self.sts_transform(v)], dim=-1)
            return self.sts_out(self.para_dropout(pair)).squeeze(-1)
        cos = F.cosine_similarity(self.sts_transform(u), self.sts_transform(v), dim=-1)
        return 5.0 * (F.relu(cos) if self.similarity == "relu_cosine" else cos)
