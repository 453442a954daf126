"""The stage contract: what a stage kind declares (`StageSpec`, registered by name), what it works with
(`StageSources`, `StageContext`) and the batch orders stages draw (`random_batches`, `length_grouped`).

Stage kinds of a training pipeline: `stages: [{contrastive: sup_quora}, {contrastive: unsup, data:
[sst, sts]}, {finetune: multitask}]`. An entry names its kind by its one registered key (the key's value
is the kind's variety); its other keys are that kind's fields. Every kind has its own schedule (epochs,
lr, batch_size, max_steps); unset, a field takes the run's value.

A new stage kind is one file in harness/stages/ with a `StageSpec` subclass decorated
`@register_stage("name")`, and one import line in harness/stages/__init__.py.

What a stage works with, typed: where its data comes from (`StageSources`, for `StageSpec.load`) and
the modules it trains (`StageContext`, for `StageSpec.build`). A stage reads nothing else: no method
object, no run fields by name. The pipeline method fills both (harness.methods.pipeline,
harness.networks.pipeline).

Batches of examples: random (a shuffled pass, as a PyTorch RandomSampler) or length-grouped (shuffle,
then sort within windows of `window` batches by length, so that each batch holds sentences of similar
length while batch order stays random). BERT encoders run padding-free (`harness.encoders.packed`), so
grouping no longer buys speed there; it only changes which examples share a batch.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Protocol, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializeAsAny,
    model_serializer,
)
from pydantic.fields import FieldInfo

from harness.data.cs224n import MultitaskData, multitask_data
from harness.data.glue import GlueSplit
from harness.data.glue_source import glue_split_from
from harness.data.nli import NLIGroup
from harness.data.train_sets import NLISource, load_nli
from harness.errors import HarnessError
from harness.registry import Registry

if TYPE_CHECKING:  # a stage's torch parts are imported where it is built: specs validate without torch
    import torch
    from torch import nn

    from harness.config import RunConfig
    from harness.encoders.encoder import Encoder
    from harness.train.loop import Stage

T = TypeVar("T")


def random_batches(items: Sequence[T], batch_size: int, rng: random.Random) -> list[list[T]]:
    order = list(range(len(items)))
    rng.shuffle(order)
    return [
        [items[i] for i in order[start : start + batch_size]] for start in range(0, len(order), batch_size)
    ]


def length_grouped(
    items: Sequence[T], batch_size: int, rng: random.Random, length: Callable[[T], int], window: int = 50
) -> list[list[T]]:
    order = list(range(len(items)))
    rng.shuffle(order)
    span = batch_size * window
    batches: list[list[T]] = []
    for start in range(0, len(order), span):
        chunk = sorted(order[start : start + span], key=lambda i: length(items[i]))
        batches += [[items[i] for i in chunk[j : j + batch_size]] for j in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


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
    """The CS224N heads and their losses (harness.networks.tasks.TaskModel)."""

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


class StageSpec(BaseModel):
    """One stage of a pipeline: its fields, the data it loads and the `Stage` it builds."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = ""
    needs_heads: ClassVar[bool] = False  # the method must build the CS224N task heads
    needs_projection: ClassVar[bool] = False  # the method must build the contrastive projection
    scorer: ClassVar[str | None] = None  # how a pipeline ending in such stages is scored (None: STS)

    _repetition: int = PrivateAttr(0)  # which pass of a `repeat` group this copy is

    epochs: int | None = Field(None, gt=0, description="unset: the run's epochs")
    lr: float | None = Field(None, gt=0, description="unset: the run's lr")
    batch_size: int | None = Field(None, gt=1, description="unset: the run's batch_size")
    max_steps: int | None = Field(None, ge=0, description="step budget; 0: none; unset: the run's max_steps")

    @classmethod
    def parse(cls, entry: dict[str, Any]) -> StageSpec:
        """A YAML entry of this kind as its spec (a kind with varieties picks the variety's class)."""
        return cls.variety_class(entry).model_validate(entry)

    @classmethod
    def variety_class(cls, entry: dict[str, Any]) -> type[StageSpec]:
        """The class an entry of this kind validates as (a kind with a class per variety picks it)."""
        return cls

    @classmethod
    def variety_classes(cls) -> list[type[StageSpec]]:
        """Every class of this kind (one, unless each variety has its own)."""
        return [cls]

    @classmethod
    def variety_field(cls) -> FieldInfo:
        """The field of the kind's own key (its type lists the varieties)."""
        return cls.model_fields[cls.kind]

    def first_epoch(self, settings: RunConfig) -> int:
        """The epoch its shuffling starts at: a repeated stage's k-th pass goes on where the last ended."""
        return self._repetition * self.schedule(settings)[0]

    def reads_quora(self) -> bool:
        """Whether the stage reads the Quora training pairs (`quora_train`)."""
        return False

    def reads_glue(self) -> bool:
        """Whether the stage reads a GLUE task (`glue_source`, `glue_dir`)."""
        return False

    def reads_nli(self) -> bool:
        """Whether the stage reads SNLI (the run's `NLISource`)."""
        return False

    def modules(self, hidden: int) -> dict[str, nn.Module]:
        """Modules of its own this stage trains (added to the method by name, once)."""
        return {}

    def unread(self) -> set[str]:
        """Fields this stage's variety does not read (left out of its logged form)."""
        return set()

    @model_serializer(mode="wrap")
    def _logged_form(self, handler: Any) -> dict[str, Any]:
        """The kind's key first, then the fields it reads; unset schedule fields (the run's) left out."""
        full = handler(self)
        own = {k: v for k, v in full.items() if k != self.kind and k not in self.unread()}
        return {self.kind: full[self.kind], **{k: v for k, v in own.items() if v is not None}}

    def expand(self) -> list[StageSpec]:
        """The stages this entry stands for (itself; a `repeat` entry, its stages n times)."""
        return [self]

    @property
    def variety(self) -> str:
        return getattr(self, self.kind)

    def schedule(self, settings: RunConfig) -> tuple[int, float, int, int | None]:
        """(epochs, lr, batch_size, max_steps), the run's values where this stage sets none."""
        own = (self.epochs, self.lr, self.batch_size, self.max_steps)
        run = (settings.epochs, settings.lr, settings.batch_size, settings.max_steps)
        return tuple(r if o is None else o for o, r in zip(own, run, strict=True))  # type: ignore[return-value]

    def load(self, sources: StageSources) -> Any:
        """This stage's training data (also called by the runner's preflight)."""
        raise NotImplementedError

    def build(self, ctx: StageContext, settings: RunConfig, data: Any) -> Stage:
        """The loop's `Stage` over the modules in `ctx`, on `data` (what `load` gave)."""
        raise NotImplementedError


STAGES: Registry[type[StageSpec]] = Registry("stage kind", "harness.stages", "kind", "see `harness methods`")
register_stage = STAGES.register


def parse_stage(entry: Any) -> Any:
    """A YAML entry (a dict naming exactly one stage kind) -> its kind's spec; a spec passes through."""
    if isinstance(entry, StageSpec):
        return entry
    kinds = STAGES.entries()
    if not isinstance(entry, dict):
        raise ValueError(f"a stage is a mapping such as {{contrastive: unsup}}, got {entry!r}")
    named = [key for key in entry if key in kinds]
    if len(named) != 1:
        raise ValueError(
            f"a stage names exactly one kind ({', '.join(kinds)}) as a key, got keys {sorted(entry)}"
        )
    return kinds[named[0]].parse(entry)


StageEntry = Annotated[SerializeAsAny[StageSpec], BeforeValidator(parse_stage)]


def expand(entries: list[StageSpec]) -> list[StageSpec]:
    """The pipeline's stages in training order, `repeat` groups written out."""
    return [stage for entry in entries for stage in entry.expand()]
