"""`unsup_simcse`: unsupervised SimCSE (Gao et al., 2021) on chosen sentences (`contrastive_data`: wiki,
sst, quora, sts, any mix); evaluated on STS. Uses the run's epochs / lr / batch_size / max_steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from harness.methods.contrastive import ContrastiveMethod, contrastive_examples
from harness.methods.params import ContrastiveParams
from harness.registry import register_method
from harness.train.loop import Stage


class UnsupParams(ContrastiveParams):
    contrastive: Literal["unsup"] = "unsup"


@register_method("unsup_simcse")
class UnsupSimCSE(ContrastiveMethod):
    Params = UnsupParams

    @classmethod
    def load_train_data(cls, config: Any, data_dir: Path) -> list[str]:
        return contrastive_examples("unsup", config.params(), config, data_dir)

    def stages(self, config: Any, data: list[str]) -> list[Stage]:
        return [
            self.contrastive_stage(
                "unsup", data, config.epochs, config.lr, config.batch_size, config.max_steps
            )
        ]
