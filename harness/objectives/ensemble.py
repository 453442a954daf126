"""`ensemble`: the multitask objective's scores, from the method's combined predictions of other runs
(no encoder is loaded)."""

from __future__ import annotations

from typing import Any

from harness.objectives.multitask import MultitaskObjective
from harness.objectives.registry import register_objective


@register_objective("ensemble")
class EnsembleObjective(MultitaskObjective):
    def predictions(self, encode: Any) -> dict[str, Any]:
        return self.model.combined_predictions(self.data)
