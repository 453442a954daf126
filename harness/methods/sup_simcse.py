"""`sup_simcse`: supervised SimCSE on Quora pairs (with or without non-paraphrase negatives, Chen) and/or
NLI triplets with contradictions as hard negatives (Gao et al., 2021), one stage per entry of `sup_data`
in that order; evaluated on STS. Each stage uses the run's epochs / lr / batch_size / max_steps."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from harness.methods.base import DataSources
from harness.methods.contrastive import ContrastiveMethod, contrastive_examples
from harness.methods.params import (
    ContrastiveDataParams,
    SimCSEParams,
    SupervisedPairParams,
    refuse_set,
    split_commas,
)
from harness.registry import register_method
from harness.train.loop import Stage


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
class SupSimCSE(ContrastiveMethod):
    Params = SupParams

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> dict[str, list[Any]]:
        params = run.params
        return {
            f"sup_{d}": contrastive_examples(f"sup_{d}", params, run.settings, sources.data_dir)
            for d in params.sup_data
        }

    def stages(self, config: Any, data: dict[str, list[Any]]) -> list[Stage]:
        return [
            self.contrastive_stage(f"sup_{d}", data[f"sup_{d}"], config.epochs, config.lr, config.batch_size,
                                   config.max_steps)
            for d in self.params.sup_data
        ]  # fmt: skip
