"""`sup_simcse`: supervised SimCSE on Quora pairs (with or without non-paraphrase negatives, Chen) and/or
NLI triplets with contradictions as hard negatives (Gao et al., 2021): one contrastive stage per entry of
`sup_data`, in that order, each on the run's epochs / lr / batch_size / max_steps; evaluated on STS."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from harness.fields import refuse_set, split_commas
from harness.methods.params import ContrastiveDataParams, SimCSEParams, SupervisedPairParams
from harness.methods.pipeline import PipelineMethod
from harness.registry import register_method
from harness.stages.contrastive import ContrastiveStage
from harness.stages.registry import StageSpec


class SupParams(SimCSEParams, ContrastiveDataParams, SupervisedPairParams):
    sup_data: Annotated[list[Literal["quora", "nli"]], BeforeValidator(split_commas)] = Field(
        default_factory=lambda: ["quora"], min_length=1, description='stages in order, e.g. "quora,nli"'
    )

    @model_validator(mode="after")
    def _negatives_of_the_data(self) -> SupParams:
        if "quora" not in self.sup_data:
            refuse_set(self, {"quora_negatives"}, "without quora in sup_data")
        if "nli" not in self.sup_data:
            refuse_set(self, {"hard_negative_weight"}, "without nli in sup_data")
        return self


@register_method("sup_simcse")
class SupSimCSE(PipelineMethod):
    Params = SupParams

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [ContrastiveStage.from_params(f"sup_{d}", params) for d in params.sup_data]
