"""`sup_simcse`: supervised SimCSE on Quora pairs (with or without non-paraphrase negatives, Chen) and/or
NLI triplets with contradictions as hard negatives (Gao et al., 2021): one contrastive stage per entry of
`sup_data`, in that order, each on the run's epochs / lr / batch_size / max_steps; evaluated on STS.

Run defaults are supervised SimCSE's (princeton-nlp/SimCSE@49fa580 run_sup_example.sh:22-32; 128 a device
on 4 GPUs = the paper's batch 512): the raw [CLS] state under the MLP, 3 epochs, batch 512, lr 5e-5, max
length 32, no warm-up. The MLP stays at test (`mlp_at_test`) by default when NLI is trained (SimCSE's
supervised model, no `--mlp_only_train`); on Quora alone (Chen 4.1) it is thrown away."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

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
    mlp_at_test: bool | None = Field(  # type: ignore[assignment]
        None, description="evaluate the projected embedding; default: yes with nli in sup_data (SimCSE)"
    )

    @model_validator(mode="after")
    def _negatives_of_the_data(self) -> SupParams:
        if "quora" not in self.sup_data:
            refuse_set(self, {"quora_negatives"}, "without quora in sup_data")
        if "nli" not in self.sup_data:
            refuse_set(self, {"hard_negative_weight"}, "without nli in sup_data")
        if self.mlp_at_test is None:
            self.mlp_at_test = self.mlp_projection and "nli" in self.sup_data
        return self


@register_method("sup_simcse")
class SupSimCSE(PipelineMethod):
    Params = SupParams
    run_defaults: ClassVar[dict[str, Any]] = {
        "pooling": "cls_before_pooler", "epochs": 3, "batch_size": 512, "lr": 5e-5, "max_seq_length": 32,
        "warmup_ratio": 0.0,
    }  # fmt: skip
    run_defaults_source = "princeton-nlp/SimCSE@49fa580 run_sup_example.sh:22-32"

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return [ContrastiveStage.from_params(f"sup_{d}", params) for d in params.sup_data]
