"""What every method is: a declaration, read without torch (its fields, paper defaults, scorer, training
data and stages), and the nn.Module it builds for a trial (harness/networks/, imported only then),
so `harness methods`, `run-study --dry-run` and every validation answer without loading torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from harness.stages.registry import StageSources, StageSpec
from harness.train.combiners import TASKS

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.networks.base import MethodModel
    from harness.resolve.run_spec import ResolvedRun


@dataclass(frozen=True)
class DataSources:
    """Where a method's training data comes from: the data root, and the tracking store for methods
    built from other runs (the ensemble). Given by the runner and the trial, never the environment."""

    data_dir: Path
    tracking_uri: str | None = None


class NoParams(BaseModel):
    """A method without parameters of its own."""

    model_config = ConfigDict(extra="forbid")


class Method:
    """Base class of a method's declaration. Subclasses set `Params` (a pydantic model of their own config
    fields, validated with extra fields forbidden), `load_train_data`, and `model`: the nn.Module class it
    trains (a name registered in harness.registry.MODELS by a file under harness/networks/), built by
    `build`; `scorer` names how trials score it (harness/scoring/)."""

    name: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = NoParams
    scorer: ClassVar[str] = "sts"
    needs_encoder: ClassVar[bool] = True  # False: no transformer is loaded (an ensemble, GloVe)
    reads_nli: ClassVar[bool] = False  # trains on SNLI itself (a pipeline's stages say it for themselves)
    trains: ClassVar[bool] = True  # False: nothing to train (an ensemble, GloVe); `needs` says what it reads
    model: ClassVar[str] = ""  # the registered name of what `build` makes (harness/networks/)
    # run fields (RunConfig) whose default for this method is its paper's; a config's own value wins
    run_defaults: ClassVar[dict[str, Any]] = {}
    run_defaults_source: ClassVar[str] = ""  # where they come from (paper section, repo@commit file:line)

    @classmethod
    def resolve(cls, params: BaseModel, where: str) -> tuple[BaseModel, tuple[StageSpec, ...], BaseModel]:
        """(the parameters the model is built from, the training stages expanded and validated, the
        fields as logged): called once, when the run is resolved (`ResolvedRun`). A method that is not a
        pipeline of stages has none, and logs its parameters as they are."""
        return params, (), params

    @classmethod
    def scorer_name(cls, params: Any, stages: tuple[StageSpec, ...]) -> str:
        """The scorer that scores this configuration (a registered name)."""
        return cls.scorer

    @classmethod
    def trained_tasks(cls, params: Any, stages: tuple[StageSpec, ...]) -> tuple[str, ...]:
        """The CS224N tasks (harness.train.combiners.TASKS) whose heads this configuration trains: none
        unless a method says otherwise."""
        return ()

    @classmethod
    def scored_tasks(cls, params: Any, stages: tuple[StageSpec, ...]) -> tuple[str, ...]:
        """The CS224N tasks scored on dev: the trained ones, or all three with `score_tasks: all`."""
        if getattr(params, "score_tasks", "trained") == "all":
            return TASKS
        return cls.trained_tasks(params, stages)

    @classmethod
    def check(cls, params: Any, stages: tuple[StageSpec, ...], where: str) -> None:
        """Checks across a method's fields beyond `Params` (called once when the run is resolved)."""

    @classmethod
    def sources(cls, run: ResolvedRun, data_dir: Path) -> StageSources:
        """Where this run's readers look: the data root and the SNLI setting (a pipeline adds its own
        data fields: the Quora training file, the GLUE source)."""
        return StageSources(data_dir, nli=run.nli)

    @classmethod
    def load_train_data(cls, run: ResolvedRun, sources: DataSources) -> object:
        """The training set named by the run's settings and parameters, in the form the method's model reads
        (also called by the runner's preflight before any trial, so a missing file fails early)."""
        raise NotImplementedError

    @classmethod
    def needs(cls, run: ResolvedRun, sources: DataSources) -> list[str]:
        """For the dry run of a method that trains nothing: what its trials would miss here, in words."""
        return []

    @classmethod
    def build(cls, encoder: Encoder | None, params: BaseModel, stages: tuple[StageSpec, ...]) -> MethodModel:
        """The nn.Module a trial trains and scores: `model`'s class around the encoder (torch from here)."""
        from harness.registry import get_model

        return get_model(cls.model)(encoder, params, cls, stages)
