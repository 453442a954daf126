"""The model of `ensemble` (harness.methods.ensemble): nothing to train; the chosen runs' dev predictions
averaged per task."""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.data.cs224n import MultitaskData
from harness.networks.base import MethodModel
from harness.registry import register_model
from harness.train.combiners import TASKS
from harness.train.loop import Stage


@register_model("ensemble")
class EnsembleModel(MethodModel):
    """The combined predictions of other runs (no encoder)."""

    tasks = TASKS

    def task_data(self, data: tuple[MultitaskData, dict]) -> MultitaskData:
        return data[0]

    def combined_predictions(self, data: tuple[MultitaskData, dict]) -> dict[str, np.ndarray]:
        _, chosen = data
        return {
            task: np.mean([np.asarray(p[task]) for _, p in runs], axis=0) for task, runs in chosen.items()
        }

    def stages(self, config: Any, data: Any) -> list[Stage]:
        return []
