"""`sbert`: Liao's baseline, SBERT's NLI cross-entropy objective alone (the `scl` method at lambda = 0)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from pydantic import BaseModel, ConfigDict, Field

from harness.choices import NLIBatches, NLIHead
from harness.methods.scl import SCLParams, SupervisedContrastiveNLI
from harness.registry import register_method

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.networks.base import MethodModel


class SBERTParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    classifier: NLIHead = "two_linear"
    nli_batches: NLIBatches = Field("file_order", description="as scl's: file_order or premise_groups")


@register_method("sbert")
class SBERTBaseline(SupervisedContrastiveNLI):
    Params = SBERTParams

    @classmethod
    def build(cls, encoder: Encoder | None, params: BaseModel, stages: tuple) -> MethodModel:
        """`scl`'s model at lambda = 0 with this classifier."""
        own = cast(SBERTParams, params)  # validated against `Params`
        return super().build(
            encoder, SCLParams(lam=0.0, classifier=own.classifier, nli_batches=own.nli_batches), stages
        )
