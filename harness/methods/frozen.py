"""`frozen`: the encoder stays frozen and only the heads are trained (Phillips' "pretrain" baseline):
one `finetune` stage with `heads_only`."""

from __future__ import annotations

from typing import Any

from harness.methods.paper_defaults import MINBERT, MINBERT_SOURCE
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.finetune import FinetuneStage
from harness.stages.registry import StageSpec


@register_method("frozen")
class FrozenEncoder(PipelineMethod):
    run_defaults = MINBERT
    run_defaults_source = MINBERT_SOURCE

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [FinetuneStage.from_params(params, heads_only=True)]
