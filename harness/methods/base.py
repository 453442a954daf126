"""What every method is: an nn.Module that owns the encoder and its heads, loads its training data and
lists its training stages."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict
from torch import nn

from harness.model.encoder import Encoder
from harness.train.loop import Stage

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.run_spec import ResolvedRun


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
    def load_train_data(cls, run: ResolvedRun, data_dir: Path) -> Sequence[Any]:
        """The training set named by the run's settings and parameters (also called by the runner's
        preflight before any trial, so a missing file fails early)."""
        raise NotImplementedError

    def stages(self, config: RunConfig, data: Any) -> list[Stage]:
        """The training phases, in order, from the run's common settings (own fields: `self.params`)."""
        raise NotImplementedError
