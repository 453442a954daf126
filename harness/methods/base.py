"""What every method is: an nn.Module that owns the encoder and its heads, loads its training data and
lists its training stages."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict
from torch import nn

from harness.model.encoder import Encoder
from harness.train.loop import Stage


class NoParams(BaseModel):
    """A method without parameters of its own."""

    model_config = ConfigDict(extra="forbid")


class Method(nn.Module):
    """Base class: an nn.Module that owns the encoder and its heads. Subclasses set `Params` (a pydantic
    model of their own config fields, validated with extra fields forbidden), `load_train_data` and
    `stages` (the ordered training phases); `evaluation` names how trials score it."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = NoParams
    evaluation: ClassVar[Literal["sts", "multitask", "ensemble"]] = "sts"

    def __init__(self, encoder: Encoder, params: BaseModel) -> None:
        super().__init__()
        self.encoder = encoder
        self.params = params

    @classmethod
    def load_train_data(cls, config: Any, data_dir: Path) -> Sequence[Any]:
        """The training set named by `config` (cached per process; called once before any trial)."""
        raise NotImplementedError

    def stages(self, config: Any, data: Any) -> list[Stage]:
        """The training phases, in order."""
        raise NotImplementedError
