"""`multitask`: vanilla multi-task fine-tuning of the encoder and heads on SST-5, Quora and STS
(the supervised baseline of Chen, David et al. and Phillips); the combiner picks average loss, batch or
epoch round robin, PCGrad, or a single task. One `finetune` stage on the run's schedule."""

from __future__ import annotations

from typing import Any

from harness.methods.paper_defaults import MINBERT, MINBERT_SOURCE
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.finetune import FinetuneStage
from harness.stages.registry import StageSpec


@register_method("multitask")
class MultitaskFinetune(PipelineMethod):
    run_defaults = MINBERT
    run_defaults_source = MINBERT_SOURCE

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [FinetuneStage.from_params(params)]
