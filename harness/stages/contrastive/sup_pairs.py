"""`contrastive: sup_pairs`: labelled pairs as positives, in-batch negatives (Phillips 3.4: "positive pairs
are taken as valid paraphrases or sentences with a similarity score of 4 or 5, with all other sentences in
batch as negatives"): Quora paraphrases and STS pairs with gold >= `min_similarity`, from `data`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BeforeValidator, Field

from harness.data.cs224n import MultitaskData
from harness.fields import split_commas
from harness.stages.contrastive.base import ContrastiveStage, info_nce_loss, register_contrastive

if TYPE_CHECKING:
    import torch

    from harness.stages.registry import StageContext, StageSources

PairSource = Literal["quora", "sts"]
PairSources = Annotated[list[PairSource], BeforeValidator(split_commas)]


def both_sources() -> list[PairSource]:
    return ["quora", "sts"]


def labelled_pairs(
    sources: Sequence[str], tasks: MultitaskData, min_similarity: float
) -> list[tuple[str, str]]:
    """Quora paraphrase pairs and STS pairs with gold >= `min_similarity`, as (s1, s2) positives."""
    pairs = []
    if "quora" in sources:
        q = tasks.quora_train
        pairs += [(a, b) for a, b, y in zip(q.first, q.second, q.targets, strict=True) if y == 1]
    if "sts" in sources:
        t = tasks.sts_train
        pairs += [(a, b) for a, b, y in zip(t.first, t.second, t.targets, strict=True) if y >= min_similarity]
    return pairs


@register_contrastive("sup_pairs")
class SupPairsStage(ContrastiveStage):
    contrastive: Literal["sup_pairs"] = "sup_pairs"
    data: PairSources = Field(default_factory=both_sources, description="where the positive pairs come from")
    min_similarity: float = Field(4.0, description="STS pairs with gold >= this are positives")

    def reads_quora(self) -> bool:
        return "quora" in self.data

    def examples(self, sources: StageSources) -> list[tuple[str, str]]:
        return labelled_pairs(self.data, sources.tasks(), self.min_similarity)

    def examples_by_source(self, sources: StageSources) -> dict[str, list[tuple[str, str]]]:
        return {
            source: labelled_pairs([source], sources.tasks(), self.min_similarity) for source in self.data
        }

    def loss(self, ctx: StageContext, batch: list[tuple[str, str]]) -> dict[str, torch.Tensor]:
        return info_nce_loss(ctx, [[b[0] for b in batch], [b[1] for b in batch]], self.temperature)
