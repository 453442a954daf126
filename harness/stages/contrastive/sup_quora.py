"""`contrastive: sup_quora`: Quora paraphrase pairs as positives (supervised SimCSE on Quora, Chen 4.1).
With `quora_negatives` (default) the non-paraphrase pairs are pushed apart too (Chen's paired loss,
harness.losses.paired_info_nce), else only the paraphrase pairs are used. With `shuffled_negatives`:
David et al. 3.3's SCL, Quora paraphrase pairs plus "a third column with shuffled sentences from the
positive pairs, ensuring that no sentence ends up in the same position" as each pair's hard negative."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from harness.fields import refuse_set
from harness.stages.contrastive.base import ContrastiveStage, info_nce_loss, register_contrastive
from harness.stages.contrastive.sup_pairs import labelled_pairs

if TYPE_CHECKING:
    import torch

    from harness.stages.registry import StageContext, StageSources


def with_shuffled_negatives(pairs: list[tuple[str, str]], seed: int = 0) -> list[tuple[str, str, str]]:
    """(s1, s2, s2 of another pair): a random cyclic shift of a shuffled order, so no pair keeps its own."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    other = {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
    return [(a, b, pairs[other[i]][1]) for i, (a, b) in enumerate(pairs)]


@register_contrastive("sup_quora")
class SupQuoraStage(ContrastiveStage):
    contrastive: Literal["sup_quora"] = "sup_quora"
    quora_negatives: bool = Field(True, description="non-paraphrases pushed apart (Chen)")
    shuffled_negatives: bool = Field(
        False, description="another pair's sentence as hard negative (David et al.)"
    )

    @model_validator(mode="after")
    def _one_kind_of_negative(self) -> SupQuoraStage:
        if self.shuffled_negatives:
            refuse_set(
                self, {"quora_negatives"}, "with shuffled_negatives (another pair's sentence is the negative)"
            )
        return self

    def reads_quora(self) -> bool:
        return True

    def examples(self, sources: StageSources) -> list[Any]:
        """(s1, s2, label) pairs, or (s1, s2, another pair's s2) with `shuffled_negatives`."""
        tasks = sources.tasks()
        if self.shuffled_negatives:
            return with_shuffled_negatives(labelled_pairs(["quora"], tasks, 0.0))
        q = tasks.quora_train
        return [(a, b, int(y)) for a, b, y in zip(q.first, q.second, q.targets, strict=True)
                if self.quora_negatives or y == 1]  # fmt: skip

    def loss(self, ctx: StageContext, batch: list[Any]) -> dict[str, torch.Tensor]:
        import torch

        from harness.losses import paired_info_nce

        if self.shuffled_negatives:
            return info_nce_loss(ctx, [[b[0] for b in batch], [b[1] for b in batch], [b[2] for b in batch]],
                                 self.temperature)  # fmt: skip
        if not self.quora_negatives:
            return info_nce_loss(ctx, [[b[0] for b in batch], [b[1] for b in batch]], self.temperature)
        n = len(batch)
        z = ctx.project([b[0] for b in batch] + [b[1] for b in batch])
        labels = torch.tensor([b[2] for b in batch], device=z.device)
        return {"loss": paired_info_nce(z[:n], z[n:], labels, self.temperature)}
