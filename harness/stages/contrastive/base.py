"""`contrastive` stages (SimCSE, Gao et al. 2021; Chen 4.1; David et al. 3.2; Phillips 3.4): an InfoNCE
loss over the method's projection of the embedding (harness.encoders.projection_head; evaluated only with
`mlp_at_test`), in-batch negatives. The stage's value names its variety, one file each in this folder:
`unsup`, `sup_quora`, `sup_nli`, `sup_pairs`. Every variety takes the fields below; its own are in its
file. A new contrastive objective is one file here (a `ContrastiveStage` subclass with its `examples`
and `loss`, decorated `@register_contrastive("name")`) plus its import in `__init__.py`."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import Field, model_validator
from pydantic.fields import FieldInfo

from harness.errors import HarnessError
from harness.fields import TemperatureField
from harness.registry import Registry
from harness.stages.registry import (
    StageContext,
    StageSources,
    StageSpec,
    length_grouped,
    random_batches,
    register_stage,
)

if TYPE_CHECKING:  # torch, the losses and the loop's Stage are imported where a stage is built
    import torch

    from harness.config import RunConfig
    from harness.train.loop import Stage


@register_stage("contrastive")
class ContrastiveStage(StageSpec, TemperatureField):
    """The fields every contrastive variety shares; `parse` picks the variety's class by its name."""

    needs_projection = True
    variety_name: ClassVar[str] = ""  # set by @register_contrastive

    contrastive: str
    limit: int | None = Field(None, gt=0, description="use only the first N examples")
    fraction: float | None = Field(
        None,
        gt=0,
        le=1,
        description="each epoch, a fresh random share of the examples (Chen 5.3: 6% of Quora)",
    )
    epoch_size: Literal["all", "smallest"] = Field(
        "all",
        description="all: an epoch is one pass over the examples; smallest: as many batches as one pass of "
        "the smallest of the stage's data sets (the CS224N sets counted in rows: Phillips 3.3 'we define a "
        "training epoch as one epoch for our smallest dataset'), drawn from a fresh shuffle each epoch",
    )
    mixing: Literal["pooled", "concurrent"] = Field(
        "pooled",
        description="pooled: the data sets' examples in one pool, negatives across them; concurrent: each "
        "step one batch from every data set, the loss the mean of theirs (negatives within a data set), an "
        "epoch the smallest data set's batches (David et al. 3.1, 4.2.2 'done on three datasets "
        "concurrently')",
    )
    length_grouping: bool = Field(
        False,
        description="batch examples of similar length together (less padding, but in-batch negatives of "
        "similar length); off = random batches, as SimCSE's Trainer (princeton-nlp/SimCSE@3ebee8f "
        "run_unsup_example.sh sets no group_by_length)",
    )

    @classmethod
    def variety_class(cls, entry: dict[str, Any]) -> type[StageSpec]:
        """The variety's class; a field only another variety reads is refused by name."""
        varieties = CONTRASTIVE.entries()
        name = entry.get("contrastive")
        if name not in varieties:
            raise ValueError(f"unknown contrastive variety {name!r}; known: {', '.join(varieties)}")
        variety = varieties[name]
        others = {f for v in varieties.values() for f in v.model_fields} - set(variety.model_fields)
        stray = sorted(key for key in entry if key in others)
        if stray:
            raise ValueError(f"'{stray[0]}' is not read by a '{name}' contrastive stage; remove it")
        return variety

    @classmethod
    def variety_classes(cls) -> list[type[StageSpec]]:
        return list(CONTRASTIVE.entries().values())

    @classmethod
    def variety_field(cls) -> FieldInfo:
        names = tuple(CONTRASTIVE.entries())
        # pydantic annotates `annotation: type[Any]`, though it takes any annotation (this Literal)
        info = FieldInfo.from_annotation(Literal[names])  # type: ignore[arg-type]
        info.description = f"the variety: {', '.join(names)}"
        return info

    @model_validator(mode="after")
    def _a_share_or_an_epoch_of_the_smallest(self) -> ContrastiveStage:
        if self.fraction is not None and (self.mixing == "concurrent" or self.epoch_size == "smallest"):
            raise ValueError(
                "fraction cannot be used with mixing: concurrent or epoch_size: smallest; remove one"
            )
        return self

    def examples(self, sources: StageSources) -> list[Any]:
        """Every training example of this variety, in a fixed order."""
        raise NotImplementedError

    def examples_by_source(self, sources: StageSources) -> dict[str, list[Any]]:
        """The examples of each data set the stage reads (varieties with several: `data`), each in a fixed
        order; by default all of them as one."""
        return {self.contrastive: self.examples(sources)}

    def source_rows(self, sources: StageSources, name: str, examples: list[Any]) -> int:
        """A data set's size for `epoch_size: smallest` and `mixing: concurrent`: a CS224N training set's
        rows (SST sentences, Quora or STS pairs: the sets the papers count epochs in), else its examples."""
        tasks = {"sst": "sst_train", "quora": "quora_train", "sts": "sts_train"}
        return len(getattr(sources.tasks(), tasks[name])) if name in tasks else len(examples)

    def loss(self, ctx: StageContext, batch: list[Any]) -> dict[str, torch.Tensor]:
        """The batch's loss under "loss"."""
        raise NotImplementedError

    @staticmethod
    def size(example: Any) -> int:
        """An example's length in characters (for `length_grouping`)."""
        return (
            len(example) if isinstance(example, str) else sum(len(x) for x in example if isinstance(x, str))
        )

    def load(self, sources: StageSources) -> list[Any] | Sourced:
        """The examples (one pool), or per data set with the smallest set's rows (`Sourced`) where the
        epoch or the batches follow the data sets (`epoch_size: smallest`, `mixing: concurrent`)."""
        if self.mixing == "pooled" and self.epoch_size == "all":
            return self._checked(self.examples(sources))
        by_source = {name: self._checked(found) for name, found in self.examples_by_source(sources).items()}
        rows = min(self.source_rows(sources, name, found) for name, found in by_source.items())
        return Sourced(by_source, rows)

    def _checked(self, examples: list[Any]) -> list[Any]:
        if not examples:
            raise HarnessError(
                f"the training set is empty: the {self.contrastive} contrastive stage found no examples "
                f"({self.model_dump(exclude_defaults=True)}); name a data set or loosen the filter"
            )
        return examples[: self.limit] if self.limit else examples

    def build(self, ctx: StageContext, settings: RunConfig, data: list[Any]) -> Stage:
        from harness.train.loop import Stage

        epochs, lr, batch_size, max_steps = self.schedule(settings)

        def drawn(examples: list[Any], rng: random.Random) -> list[list[Any]]:
            if self.length_grouping:
                grouped = length_grouped(examples, batch_size, rng, self.size)
            else:
                grouped = random_batches(examples, batch_size, rng)
            return [b for b in grouped if len(b) > 1]

        def batches(rng: random.Random) -> list[Any]:
            if not isinstance(data, Sourced):
                chosen = (
                    data
                    if self.fraction is None
                    else rng.sample(data, max(2, round(self.fraction * len(data))))
                )
                return drawn(chosen, rng)
            steps = math.ceil(data.rows / batch_size)  # an epoch of the smallest data set
            if self.mixing == "pooled":
                pool = _once_each([x for found in data.by_source.values() for x in found])
                return drawn(pool, rng)[:steps]
            per_source = {name: drawn(found, rng) for name, found in data.by_source.items()}
            steps = min(steps, *(len(b) for b in per_source.values()))
            return [[(name, per_source[name][i]) for name in per_source] for i in range(steps)]

        def loss(batch: list[Any]) -> dict[str, torch.Tensor]:
            if not isinstance(data, Sourced) or self.mixing == "pooled":
                return self.loss(ctx, batch)
            parts = {name: self.loss(ctx, part)["loss"] for name, part in batch}  # a data set's own negatives
            total = sum(parts.values()) / len(parts)  # combined as the concurrent fine-tuning's mean
            # named by the variety too: a later fine-tuning stage logs its own loss_sst, loss_sts
            return {
                "loss": cast("torch.Tensor", total),  # a sum of tensors (never empty) is a tensor
                **{f"loss_{self.contrastive}_{name}": v.detach() for name, v in parts.items()},
            }

        def remember(planned: list[Any]) -> None:  # every sentence the stage's steps embed, tokenized once
            from harness.encoders.token_store import strings

            ctx.encoder.remember(strings(planned))

        return Stage(f"contrastive-{self.contrastive}", batches, [loss], epochs, lr, max_steps,
                     remember=remember)  # fmt: skip


def _once_each(examples: list[Any]) -> list[Any]:
    """The examples in order, each once (a sentence two data sets share); unhashable ones as given."""
    try:
        return list(dict.fromkeys(examples))
    except TypeError:
        return examples


@dataclass(frozen=True)
class Sourced:
    """A stage's examples per data set, and the smallest set's rows (its epoch, in examples)."""

    by_source: dict[str, list[Any]]
    rows: int


CONTRASTIVE: Registry[type[ContrastiveStage]] = Registry(
    "contrastive variety", "harness.stages.contrastive", "variety_name", "see `harness methods`"
)
register_contrastive = CONTRASTIVE.register


def info_nce_loss(ctx: StageContext, columns: list[list[str]], temperature: float, weight: float = 0.0
                  ) -> dict[str, torch.Tensor]:  # fmt: skip
    """InfoNCE of the first column against the second (row i's positive), a third column as each row's
    hard negative (with log weight `weight`, SimCSE's `hard_negative_weight`); one forward for all."""
    from harness.losses import info_nce

    n = len(columns[0])
    z = ctx.project([s for column in columns for s in column])
    negatives = z[2 * n :] if len(columns) > 2 else None
    if negatives is None:
        return {"loss": info_nce(z[:n], z[n : 2 * n], temperature=temperature)}
    return {"loss": info_nce(z[:n], z[n : 2 * n], negatives, temperature, weight)}
