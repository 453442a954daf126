"""`ensemble`: the multitask scorer's scores, from the method's combined predictions of other runs
(no encoder is loaded)."""

from __future__ import annotations

from typing import Any

from harness.scoring.multitask import MultitaskScorer
from harness.scoring.registry import register_scorer


@register_scorer("ensemble")
class EnsembleScorer(MultitaskScorer):
    def predictions(self, encode: Any) -> dict[str, Any]:
        return self.model.combined_predictions(self.data)
