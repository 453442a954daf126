"""What every method is: an nn.Module that owns the encoder and its heads, loads its training data and
lists its training stages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict
from torch import nn

from harness.model.encoder import Encoder
from harness.train.loop import Stage

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.run_spec import ResolvedRun


@dataclass(frozen=True)
class DataSources:
    """Where a method's training data comes from: the data root, and the tracking store for methods
    built from other runs (the ensemble). Given by the runner and the trial, never the environment."""

    data_dir: Path
    tracking_uri: str | None = None


class NoParams(BaseModel):
    """A method without parameters of its own."""

    model_config = ConfigDict(extra="forbid")


class Method(nn.Module):
    """Base class: an nn.Module that owns the encoder and its heads. Subclasses set `Params` (a pydantic
    model of their own config fields, validated with extra fields forbidden), `load_train_data` and
    `stages` (the ordered training phases); `objective` names how trials score it (harness/objectives/)."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = NoParams
    objective: ClassVar[str] = "sts"
    needs_encoder: ClassVar[bool] = True  # False: no transformer is loaded (an ensemble, GloVe)
    # run fields (RunConfig) whose default for this method is its paper's; a config's own value wins
    run_defaults: ClassVar[dict[str, Any]] = {}
    run_defaults_source: ClassVar[str] = ""  # where they come from (paper section, repo@commit file:line)

    def __init__(self, encoder: Encoder | None, params: BaseModel) -> None:
        super().__init__()
        self.encoder = encoder
        self.params = params

    @classmethod
    def objective_name(cls, params: Any) -> str:
        """The objective that scores this configuration (a registered name)."""
        return cls.objective

    @classmethod
    def check(cls, params: Any, where: str) -> None:
        """Checks across a method's fields beyond `Params` (called once when the run is resolved)."""

    @classmethod
    def load_train_data(cls, run: ResolvedRun, sources: DataSources) -> Sequence[Any]:
        """The training set named by the run's settings and parameters (also called by the runner's
        preflight before any trial, so a missing file fails early)."""
        raise NotImplementedError

    def stage_descriptions(self, config: RunConfig) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """For the stage cache (harness.train.stage_keys): (method fields that act on every stage, one
        description per stage of everything else that determines it), or None: not cacheable."""
        return None

    def eval_encoder(self) -> nn.Module | None:
        """What the embedding evaluation encodes with (an `Encoder`, or one with a head on top)."""
        return self.encoder

    def stages(self, config: RunConfig, data: Any) -> list[Stage]:
        """The training phases, in order, from the run's common settings (own fields: `self.params`)."""
        raise NotImplementedError
