"""The projection a contrastive stage puts on the sentence embedding, and an encoder that keeps it at test.

- `simcse`: Linear(h, h) + Tanh, randomly initialised (Gao et al. 2021, 3 / appendix; princeton-nlp/
  SimCSE@49fa580 simcse/models.py:19-31 MLPLayer). SimCSE runs it over the raw [CLS] state of a BERT
  without its pretrained pooler (`:68` cls = last_hidden[:, 0]; `:92` the MLP for `cls`): in the harness
  that is `pooling: cls_before_pooler` with this projection.
- `simclr`: Linear(h, h), ReLU, Linear(h, h): Chen 4.1's "small (2-layer) MLP network ... inspired by
  SimCLR" (SimCLR, Chen et al. 2020, 2.1: g(h) = W2 ReLU(W1 h)); Chen gives no width, so it stays h.

Unsupervised SimCSE uses the MLP in training only (`--mlp_only_train`, run_unsup_example.sh:19-20;
models.py:262 returns the raw [CLS] at test); supervised SimCSE keeps it at test (run_sup_example.sh:30
has no `--mlp_only_train`): `mlp_at_test: true` evaluates `ProjectedEncoder`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from harness.choices import Projection  # named once, torch-free
from harness.encoders.encoder import Encoder


def projection_head(hidden: int, kind: Projection = "simcse") -> nn.Module:
    """The projection `kind` for embeddings of width `hidden` (see the module docstring)."""
    if kind == "simclr":
        return nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
    return nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())


class ProjectedEncoder(nn.Module):
    """`encoder` followed by `head`, with the encoder's tokenizing interface, so the evaluation path
    (`harness.evaluate.encode`, the embedding cache, whose key covers both modules' weights) scores the
    projected embedding."""

    def __init__(self, encoder: Encoder, head: nn.Module) -> None:
        super().__init__()
        self.encoder, self.head = encoder, head

    @property  # type: ignore[override]
    def training(self) -> bool:
        """The wrapped encoder's mode: the evaluation restores the mode it found, the method's own."""
        return self.encoder.training if "encoder" in self._modules else True

    @training.setter
    def training(self, mode: bool) -> None:
        """`train()` / `eval()` set the wrapped modules themselves; this wrapper keeps no mode."""

    @property
    def pooling(self) -> str:
        return f"{self.encoder.pooling}{'+normalize' if self.encoder.normalize else ''}+projection"

    @property
    def max_length(self) -> int:
        return self.encoder.max_length

    @property
    def eval_length(self) -> int:
        return self.encoder.eval_length

    @property
    def device(self) -> torch.device:
        return self.encoder.device

    def token_ids(self, sentences: Sequence[str]) -> dict[str, list[list[int]]]:
        return self.encoder.token_ids(sentences)

    def collate(self, features: dict[str, list[list[int]]]) -> dict[str, torch.Tensor]:
        return self.encoder.collate(features)

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head(self.encoder(inputs)).float()
