"""`contrastive: sup_nli` (supervised SimCSE, Gao et al. 2021): SNLI (premise, entailment, contradiction)
triplets, the entailment as positive and the contradiction as hard negative of every anchor in the
batch; `hard_negative_weight` is SimCSE's log weight on each anchor's own hard negative. The SNLI is the
run's (`train_data`, `snli_splits`, `train_limit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from harness.data.nli import ENTAILMENT, LABELS, NLIGroup
from harness.stages.contrastive.base import ContrastiveStage, info_nce_loss, register_contrastive

if TYPE_CHECKING:
    import torch

    from harness.stages.registry import StageContext, StageSources

CONTRADICTION = LABELS["contradiction"]


def nli_triplets(groups: list[NLIGroup]) -> list[tuple[str, str, str]]:
    """(premise, entailment, contradiction) for every premise that has both."""
    triplets = []
    for group in groups:
        entailed = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == ENTAILMENT]
        contradicted = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == CONTRADICTION]
        triplets += [(group.premise, e, c) for e, c in zip(entailed, contradicted, strict=False)]
    return triplets


@register_contrastive("sup_nli")
class SupNLIStage(ContrastiveStage):
    contrastive: Literal["sup_nli"] = "sup_nli"
    hard_negative_weight: float = Field(0.0, description="SimCSE's log weight on own hard negative")

    def reads_nli(self) -> bool:
        return True

    def examples(self, sources: StageSources) -> list[tuple[str, str, str]]:
        return nli_triplets(sources.nli_groups())

    def loss(self, ctx: StageContext, batch: list[tuple[str, str, str]]) -> dict[str, torch.Tensor]:
        columns = [[b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]]
        return info_nce_loss(ctx, columns, self.temperature, self.hard_negative_weight)
