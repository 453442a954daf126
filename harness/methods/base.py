"""What every method is: an nn.Module that owns its heads, reads its training data and computes a loss."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
from pydantic import BaseModel, ConfigDict
from torch import nn

from harness.model.encoder import Encoder


class NoParams(BaseModel):
    """A method without parameters of its own."""

    model_config = ConfigDict(extra="forbid")


class Method(nn.Module):
    """Base class. Subclasses set `Params` (a pydantic model of their own config fields, validated with
    extra fields forbidden) and implement `train_data`, `batches` and `loss`."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = NoParams

    def __init__(self, encoder: Encoder, params: BaseModel) -> None:
        super().__init__()
        self.encoder = encoder
        self.params = params

    @classmethod
    def load_train_data(cls, config: Any, data_dir: Path) -> Sequence[Any]:
        """The training set named by `config` (cached per process; called once before any trial)."""
        raise NotImplementedError

    def batches(self, data: Sequence[Any], batch_size: int, rng: random.Random) -> list[Any]:
        raise NotImplementedError

    def loss(self, batch: Any) -> dict[str, torch.Tensor]:
        """A dict with the total under "loss" plus any parts worth logging (all scalar tensors)."""
        raise NotImplementedError
