"""`kind: curve`: a metric's history during training, one line per label (Chen Fig. 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pandas as pd
from pydantic import Field

from harness.errors import HarnessError
from harness.report.collect import filter_runs, row_labels
from harness.report.figures import curve
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
        from harness.tracking.study_runs import histories

        ids = list(ctx.frame["run_id"])
        epochs = histories(ctx.tracker, ids, "train.epoch") if self.x == "epoch" else {}
        spec = self
        if self.x == "epoch" and not any(epochs.values()):
            spec = self.model_copy(update={"x": "step", "title": f"{self.title} (by step: no epoch ended)"})
        curve(curve_frame(ctx.frame, spec, histories(ctx.tracker, ids, spec.metric), epochs), spec, path)


def curve_frame(frame: pd.DataFrame, spec: Curve, history: dict, epochs: dict) -> pd.DataFrame:
    """Long frame (label, run_id, x, value): each run's metric history, at epoch ends for `x: epoch`
    (the step at which `train.epoch` was logged)."""
    rows = []
    frame = filter_runs(frame, spec.where, f"figure {spec.name}")
    labels = row_labels(frame, spec.label, f"figure {spec.name}")
    for label, record in zip(labels, frame.to_dict("records"), strict=True):
        points = history.get(record["run_id"], {})
        if spec.x == "epoch":
            at = epochs.get(record["run_id"], {})
            points = {int(at[step]): value for step, value in points.items() if step in at}
        rows += [{"label": label, "run_id": record["run_id"], "x": x, "value": v} for x, v in points.items()]
    if not rows:
        raise HarnessError(
            f"figure {spec.name}: no run logged {spec.metric} by {spec.x}; fix reports/<study>.yaml"
        )
    return pd.DataFrame(rows)
