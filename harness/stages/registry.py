"""Stage kinds of a training pipeline: `stages: [{contrastive: sup_quora}, {contrastive: unsup, data:
[sst, sts]}, {finetune: multitask}]`. An entry names its kind by its one registered key (the key's value
is the kind's variety); its other keys are that kind's fields. Every kind has its own schedule (epochs,
lr, batch_size, max_steps); unset, a field takes the run's value.

A new stage kind is one file in harness/stages/ with a `StageSpec` subclass decorated
`@register_stage("name")`, and one import line in harness/stages/__init__.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar

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

from harness.registry import Registry

if TYPE_CHECKING:  # a stage's torch parts are imported where it is built: specs validate without torch
    from torch import nn

    from harness.config import RunConfig
    from harness.stages.context import StageContext, StageSources
    from harness.train.loop import Stage


class StageSpec(BaseModel):
    """One stage of a pipeline: its fields, the data it loads and the `Stage` it builds."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = ""
    needs_heads: ClassVar[bool] = False  # the method must build the CS224N task heads
    needs_projection: ClassVar[bool] = False  # the method must build the contrastive projection
    objective: ClassVar[str | None] = None  # how a pipeline ending in such stages is scored (None: STS)

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
