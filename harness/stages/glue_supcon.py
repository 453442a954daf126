"""`glue_supcon` stages: SupCL-Seq's first stage on a GLUE task's train split (Sedghamiz et al., 2021, section
2; Appendix A Table 4 per task): the supervised contrastive loss (eq. 2, harness.losses.supcon) over dropout
views of each example, one forward per probability in `views` (harness.encoders.dropout_views: tau 0.05,
L2-normalised, `view_passes: authors_loop` and `base_temperature` for the authors' code), examples with the
same label as positives. A pair task's pair is encoded jointly ([CLS] a [SEP] b [SEP], as the `glue` stage
and the authors' notebook, hooman650/SupCL-Seq@320440f examples/glue_bert_base.ipynb cell 5, `tokenizer(s1,
s2)`). STS-B's classes are its scores rounded to the first decimal (footnote 3,
harness.data.glue.supcon_labels; the code passes the raw scores, src/SupCsTrainer.py:100).

It trains no head, so a pipeline follows it with the linear probe on the frozen encoder (section 2):
`[{glue_supcon: CoLA}, {glue: CoLA, heads_only: true}]`, scored on the task's dev split."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np

from harness.data.glue import GlueSplit, supcon_labels
from harness.encoders.dropout_views import DropoutViewFields, ViewPasses, model_dropout, supcon_views
from harness.stages.glue import GlueTaskName, glue_embed
from harness.stages.registry import StageContext, StageSources, StageSpec, random_batches, register_stage

if TYPE_CHECKING:  # torch and the loop's Stage are imported where a stage is built
    import torch

    from harness.config import RunConfig
    from harness.train.loop import Stage


@register_stage("glue_supcon")
class GlueSupConStage(StageSpec, DropoutViewFields):
    glue_supcon: GlueTaskName

    def reads_glue(self) -> bool:
        return True

    def load(self, sources: StageSources) -> GlueSplit:
        return sources.glue(self.glue_supcon, "train")

    def loss(
        self, ctx: StageContext, data: GlueSplit, classes: np.ndarray, passes: ViewPasses, rows: list[int]
    ) -> torch.Tensor:
        """supcon over the views of the rows' examples; `classes`: every example's (`supcon_labels`)."""
        import torch

        labels = torch.as_tensor(classes[rows], device=ctx.encoder.device)
        embed = lambda: glue_embed(ctx.encoder, data, rows)  # noqa: E731
        return supcon_views(ctx.encoder, self, passes, embed, labels)

    def build(self, ctx: StageContext, settings: RunConfig, data: GlueSplit) -> Stage:
        from harness.train.loop import Stage

        epochs, lr, batch_size, max_steps = self.schedule(settings)
        classes = supcon_labels(self.glue_supcon, data.targets)
        passes = ViewPasses(self, model_dropout(ctx.encoder))

        def batches(rng: random.Random) -> list[list[int]]:
            return random_batches(list(range(len(data))), batch_size, rng)

        def loss(rows: list[int]) -> dict[str, torch.Tensor]:
            return {"loss": self.loss(ctx, data, classes, passes, rows)}

        return Stage(f"glue_supcon-{self.glue_supcon}", batches, [loss], epochs, lr, max_steps)
