"""`sbert`: Liao's baseline, SBERT's NLI cross-entropy objective alone (the `scl` method at lambda = 0)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harness.methods.scl import SCLParams, SupervisedContrastiveNLI
from harness.model.encoder import Encoder
from harness.model.heads import NLIHead
from harness.registry import register_method


class SBERTParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    classifier: NLIHead = "two_linear"


@register_method("sbert")
class SBERTBaseline(SupervisedContrastiveNLI):
    Params = SBERTParams

    def __init__(self, encoder: Encoder, params: SBERTParams) -> None:
        super().__init__(encoder, SCLParams(lam=0.0, classifier=params.classifier))
