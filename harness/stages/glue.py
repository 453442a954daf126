"""`glue` stages: standard fine-tuning on a GLUE task (Devlin et al. 2019, 4.1): the pooled embedding of
the sentence, or of the pair encoded jointly ([CLS] a [SEP] b [SEP]), then dropout and one linear layer;
cross-entropy over the classes, or MSE on the score for the regression task STS-B ("no architecture
modifications", SupCL-Seq footnote 3). With `pooling: cls` the embedding is BERT's pooler output, as in
Devlin et al. `heads_only` freezes the encoder: SupCL-Seq's linear probe. The head is named per task,
so a later stage on the same task (a probe after fine-tuning) trains the same head.

`dropout_views` is SupCL-Seq's "Dropout Augmented" baseline (Table 2, 3.2.1: "the standard BERT_base
trained also on augmented samples"), read as: each batch forwarded once per listed dropout probability p_n
(the encoder's dropout set to p_n, as SupCL-Seq's views, harness.encoders.dropout_views) and the loss the
mean over the N views, L = 1/N sum_n CE(head(Enc(x, p_n)), y) (MSE for STS-B). The paper says no more:
an interpretation (the same views as SupCL-Seq, cross-entropy in place of the contrastive loss)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from harness.data.glue import GLUE_TASKS, GlueSplit, glue_task
from harness.encoders.dropout_views import dropout_passes
from harness.fields import Probabilities
from harness.stages.registry import StageContext, StageSources, StageSpec, random_batches, register_stage

if TYPE_CHECKING:  # torch and the loop's Stage are imported where a stage is built
    import torch
    from torch import nn

    from harness.config import RunConfig
    from harness.encoders.encoder import Encoder
    from harness.train.loop import Stage

if TYPE_CHECKING:  # mypy cannot read a Literal built at run time: a str to it (pydantic checks the names)
    GlueTaskName = str
else:
    GlueTaskName = Literal[tuple(GLUE_TASKS)]


def head_name(task: str) -> str:
    return "glue_" + task.replace("-", "").lower()


def glue_embed(encoder: Encoder, split: GlueSplit, rows: list[int]) -> torch.Tensor:
    """The pooled embeddings [len(rows), d] of the rows' sentences, or of their pairs encoded jointly."""
    first = [split.first[i] for i in rows]
    if split.second is None:
        return encoder.embed(first)
    return encoder.embed_pairs(first, [split.second[i] for i in rows])


def glue_outputs(ctx: StageContext, task: str, split: GlueSplit, rows: list[int]) -> torch.Tensor:
    """The task head's outputs [len(rows), classes] (one column for regression)."""
    return ctx.module(head_name(task))(glue_embed(ctx.encoder, split, rows))


def glue_loss(outputs: torch.Tensor, targets: torch.Tensor, regression: bool) -> torch.Tensor:
    import torch.nn.functional as F

    if regression:
        return F.mse_loss(outputs[:, 0].float(), targets.float())
    return F.cross_entropy(outputs.float(), targets)


@register_stage("glue")
class GlueStage(StageSpec):
    scorer = "glue"

    glue: GlueTaskName
    head_dropout: float = Field(0.1, ge=0, lt=1, description="before the linear head (BERT's 0.1)")
    heads_only: bool = Field(False, description="freeze the encoder, train only the head (linear probe)")
    dropout_views: Probabilities | None = Field(
        None,
        min_length=1,
        description="SupCL-Seq's Dropout Augmented baseline: the loss averaged over one forward per "
        "listed encoder dropout probability; unset: one forward at the model's own dropout",
    )

    def reads_glue(self) -> bool:
        return True

    def modules(self, hidden: int) -> dict[str, nn.Module]:
        from torch import nn

        outputs = glue_task(self.glue).num_outputs
        return {
            head_name(self.glue): nn.Sequential(nn.Dropout(self.head_dropout), nn.Linear(hidden, outputs))
        }

    def load(self, sources: StageSources) -> GlueSplit:
        return sources.glue(self.glue, "train")

    def build(self, ctx: StageContext, settings: RunConfig, data: GlueSplit) -> Stage:
        import torch

        from harness.train.loop import Stage

        epochs, lr, batch_size, max_steps = self.schedule(settings)
        regression = glue_task(self.glue).labels is None
        head = ctx.module(head_name(self.glue))

        def loss(rows: list[int]) -> dict[str, torch.Tensor]:
            targets = torch.as_tensor(data.targets[rows], device=ctx.encoder.device)

            def outputs() -> torch.Tensor:
                return glue_outputs(ctx, self.glue, data, rows)

            probabilities = list(self.dropout_views or [])
            views = dropout_passes(ctx.encoder, probabilities, outputs) if probabilities else [outputs()]
            return {"loss": torch.stack([glue_loss(o, targets, regression) for o in views]).mean()}

        def batches(rng: random.Random) -> list[list[int]]:
            return random_batches(list(range(len(data))), batch_size, rng)

        return Stage(f"glue-{self.glue}", batches, [loss], epochs, lr, max_steps,
                     trainable=(lambda: list(head.parameters())) if self.heads_only else None)  # fmt: skip
