"""`unsup_simcse`: unsupervised SimCSE (Gao et al., 2021) on chosen sentences (`contrastive_data`: wiki,
sst, quora, sts, any mix); evaluated on STS. One `contrastive: unsup` stage on the run's epochs / lr /
batch_size / max_steps."""

from __future__ import annotations

from typing import Any

from harness.methods.params import ContrastiveDataParams, SimCSEParams, UnsupDataParams
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.contrastive import ContrastiveStage
from harness.stages.registry import StageSpec


class UnsupParams(SimCSEParams, ContrastiveDataParams, UnsupDataParams):
    """SimCSE's loss, the sentences and their batching."""


@register_method("unsup_simcse")
class UnsupSimCSE(PipelineMethod):
    Params = UnsupParams

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [ContrastiveStage.from_params("unsup", params)]
