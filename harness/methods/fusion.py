"""`fusion`: each batch is trained first on the task objective, then on unsupervised SimCSE over the same
batch's sentences: one `fusion` stage (Chen 4.2 setting 3, the best unsupervised method). The SimCSE
step uses the batch's own sentences, so fusion has no contrastive data or schedule of its own, and the
two steps are separate updates, never projected (PCGrad is refused)."""

from __future__ import annotations

from typing import Any

from harness.methods.paper_defaults import CHEN_SOURCE, CHEN_STRATEGIES
from harness.methods.params import MultitaskParams, SimCSEParams
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.fusion import FusionStage
from harness.stages.registry import StageSpec


class FusionParams(MultitaskParams, SimCSEParams):
    """Heads, the task schedule, SimCSE's temperature and projection."""


@register_method("fusion")
class Fusion(PipelineMethod):
    Params = FusionParams
    run_defaults = CHEN_STRATEGIES
    run_defaults_source = CHEN_SOURCE

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [FusionStage.from_params(params, temperature=params.temperature)]
