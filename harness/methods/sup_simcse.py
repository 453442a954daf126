"""`sup_simcse`: supervised SimCSE on Quora pairs (with or without non-paraphrase negatives, Chen) and/or
NLI triplets with contradictions as hard negatives (Gao et al., 2021), one stage per entry of `sup_data`
in that order; evaluated on STS. Each stage uses the run's epochs / lr / batch_size / max_steps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from harness.methods.contrastive import ContrastiveMethod, contrastive_examples
from harness.methods.params import ContrastiveParams, split_commas
from harness.registry import register_method
from harness.train.loop import Stage


class SupParams(ContrastiveParams):
    contrastive: Literal["sup_quora", "sup_nli"] = "sup_quora"
    sup_data: Annotated[list[Literal["quora", "nli"]], BeforeValidator(split_commas)] = Field(
        default_factory=lambda: ["quora"], min_length=1, description='stages in order, e.g. "quora,nli"'
    )


@register_method("sup_simcse")
class SupSimCSE(ContrastiveMethod):
    Params = SupParams

    @classmethod
    def load_train_data(cls, config: Any, data_dir: Path) -> dict[str, list[Any]]:
        params = config.params()
        return {
            f"sup_{d}": contrastive_examples(f"sup_{d}", params, config, data_dir) for d in params.sup_data
        }

    def stages(self, config: Any, data: dict[str, list[Any]]) -> list[Stage]:
        return [
            self.contrastive_stage(f"sup_{d}", data[f"sup_{d}"], config.epochs, config.lr, config.batch_size,
                                   config.max_steps)
            for d in self.params.sup_data
        ]  # fmt: skip
