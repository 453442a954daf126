"""`unsup_simcse`: unsupervised SimCSE (Gao et al., 2021) on chosen sentences (`contrastive_data`: wiki,
sst, quora, sts, any mix); evaluated on STS. Uses the run's epochs / lr / batch_size / max_steps."""

from __future__ import annotations

from typing import Any

from harness.methods.base import DataSources
from harness.methods.contrastive import ContrastiveMethod, contrastive_examples
from harness.methods.params import ContrastiveDataParams, SimCSEParams, UnsupDataParams
from harness.registry import register_method
from harness.train.loop import Stage


class UnsupParams(SimCSEParams, ContrastiveDataParams, UnsupDataParams):
    """SimCSE's loss, the sentences and their batching."""


@register_method("unsup_simcse")
class UnsupSimCSE(ContrastiveMethod):
    Params = UnsupParams

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> list[str]:
        return contrastive_examples("unsup", run.params, run.settings, sources.data_dir)

    def stages(self, config: Any, data: list[str]) -> list[Stage]:
        return [
            self.contrastive_stage(
                "unsup", data, config.epochs, config.lr, config.batch_size, config.max_steps
            )
        ]
