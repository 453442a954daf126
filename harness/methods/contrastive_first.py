"""`contrastive_first`: a contrastive stage (unsupervised or supervised, on the chosen data, with its own
`contrastive_*` schedule), then multi-task fine-tuning on the run's schedule (Chen 4.2 setting 2; David
et al.'s UCL / SCL pre-training). For several contrastive stages write `method: pipeline`."""

from __future__ import annotations

from typing import Any

from harness.methods.paper_defaults import CHEN_SOURCE, CHEN_STRATEGIES
from harness.methods.params import ComposedParams
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.contrastive import ContrastiveStage
from harness.stages.finetune import FinetuneStage
from harness.stages.registry import StageSpec


def contrastive_stage(params: ComposedParams) -> ContrastiveStage:
    """The composed methods' contrastive stage: its own schedule, no step budget unless given."""
    return ContrastiveStage.from_params(
        params.contrastive, params, epochs=params.contrastive_epochs, lr=params.contrastive_lr,
        batch_size=params.contrastive_batch_size, max_steps=params.contrastive_max_steps or 0,
    )  # fmt: skip


@register_method("contrastive_first")
class ContrastiveFirst(PipelineMethod):
    Params = ComposedParams
    run_defaults = CHEN_STRATEGIES
    run_defaults_source = CHEN_SOURCE

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [contrastive_stage(params), FinetuneStage.from_params(params)]
