"""`supervised_first`: multi-task fine-tuning, then a contrastive stage (Chen 4.2 setting 1)."""

from __future__ import annotations

from typing import Any

from harness.methods.contrastive_first import contrastive_stage
from harness.methods.paper_defaults import CHEN_SOURCE, CHEN_STRATEGIES
from harness.methods.params import ComposedParams
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.finetune import FinetuneStage
from harness.stages.registry import StageSpec


@register_method("supervised_first")
class SupervisedFirst(PipelineMethod):
    Params = ComposedParams
    run_defaults = CHEN_STRATEGIES
    run_defaults_source = CHEN_SOURCE

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [FinetuneStage.from_params(params), contrastive_stage(params)]
