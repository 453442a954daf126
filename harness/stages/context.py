"""What a stage works with, typed: where its data comes from (`StageSources`, for `StageSpec.load`) and
the modules it trains (`StageContext`, for `StageSpec.build`). A stage reads nothing else: no method
object, no run fields by name. The pipeline method fills both (harness.methods.pipeline,
harness.method_models.pipeline)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from harness.data.cs224n import MultitaskData, multitask_data
from harness.data.glue import GlueSplit
from harness.data.glue_source import glue_split_from
from harness.data.nli import NLIGroup
from harness.data.train_sets import NLISource, load_nli
from harness.errors import HarnessError

if TYPE_CHECKING:  # stage specs validate without torch
    import torch
    from torch import nn

    from harness.model.encoder import Encoder


@dataclass(frozen=True)
class StageSources:
    """Where a pipeline's stages read: the data root, the Quora training file (`quora_train`; unset: a
    fixed split of quora-dev), the GLUE source and folder (`glue_source`, `glue_dir`) and the SNLI
    setting (`train_data`, `snli_splits`, `train_limit`)."""

    data_dir: Path
    quora_train: str | None = None
    glue_source: Literal["local", "hub"] = "local"
    glue_dir: str | None = None
    nli: NLISource = NLISource()

    def tasks(self) -> MultitaskData:
        """The CS224N sets (SST-5, Quora, STS; cached per process)."""
        return multitask_data(self.data_dir, self.quora_train)

    def glue(self, task: str, split: str) -> GlueSplit:
        """A split ("train" or "dev") of a GLUE task from the pipeline's GLUE source."""
        return glue_split_from(self.glue_source, self.data_dir, self.glue_dir, task, split)

    def nli_groups(self) -> list[NLIGroup]:
        """The SNLI groups (premise with its hypotheses) of the SNLI setting."""
        return load_nli(self.nli, self.data_dir)


class TaskHeads(Protocol):
    """The CS224N heads and their losses (harness.method_models.tasks.TaskModel)."""

    def head_parameters(self) -> list[nn.Parameter]:
        """The heads' parameters (what `heads_only` trains)."""
        ...

    def step_loss(self, step: dict[str, list[int]], data: MultitaskData) -> dict[str, torch.Tensor]:
        """The mean of a multi-task step's task losses (each logged; kept apart for PCGrad)."""
        ...


@dataclass
class StageContext:
    """The modules a pipeline built for its stages: the encoder, the contrastive projection (None without
    one), the CS224N heads (None when no stage trains them) and the modules stages brought, by name (a
    GLUE task's head). The objects are the pipeline model's own, so what a stage trains is what the
    model saves and scores."""

    encoder: Encoder
    projection: nn.Module | None = None
    tasks: TaskHeads | None = None
    modules: Mapping[str, nn.Module] = field(default_factory=dict)

    def project(self, sentences: list[str]) -> torch.Tensor:
        """The embeddings of `sentences`, through the projection when there is one."""
        z = self.encoder.embed(sentences)
        return self.projection(z) if self.projection is not None else z

    def heads(self) -> TaskHeads:
        if self.tasks is None:
            raise HarnessError("this stage trains the task heads, and the pipeline built none")
        return self.tasks

    def module(self, name: str) -> nn.Module:
        if name not in self.modules:
            raise HarnessError(f"this stage trains the module {name!r}, and the pipeline built none")
        return self.modules[name]
