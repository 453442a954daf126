"""`kind: curve`: a metric's history during training, one line per label (Chen Fig. 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from harness.report.parts.base import FigurePart, Filtered, PartContext, register_part


@register_part("curve")
class Curve(FigurePart, Filtered):
    """A metric's history during training, one line per label (runs sharing a label, e.g. seeds: their
    mean, the spread shaded), against the step or, with `x: epoch`, the epoch (Chen Fig. 2)."""

    metric: str = Field(description="a step metric, e.g. dev.overall")
    label: str = Field(description="line label template over params, e.g. '{variant}'")
    x: Literal["step", "epoch"] = "step"
    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        """By epoch where an epoch ended in the runs; else by step, saying so in the title (step budgets
        that end before an epoch does)."""
        from harness.report.figures import curve, curve_frame
        from harness.tracking.study_runs import histories

        ids = list(ctx.frame["run_id"])
        epochs = histories(ctx.tracker, ids, "train.epoch") if self.x == "epoch" else {}
        spec = self
        if self.x == "epoch" and not any(epochs.values()):
            spec = self.model_copy(update={"x": "step", "title": f"{self.title} (by step: no epoch ended)"})
        curve(curve_frame(ctx.frame, spec, histories(ctx.tracker, ids, spec.metric), epochs), spec, path)
