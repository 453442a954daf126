"""`kind: line`: a final metric against a parameter, one line per label (Liao's ablations as lines)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from pydantic import Field

from harness.report.collect import filter_runs, require_columns, row_labels
from harness.report.figures import curve
from harness.report.parts.base import FigurePart, Filtered, PartContext, register_part
from harness.report.table_stats import seed_sorted
from harness.stats.compare import interval

if TYPE_CHECKING:
    from harness.report.evidence import Evidence


@register_part("line")
class Line(FigurePart, Filtered):
    """A final metric against a parameter (`x`), one line per label (e.g. `tau {tau}`), seeds averaged and
    their spread shaded, each point's 95% interval as an error bar (items, and seeds where several; Liao's
    lambda and tau ablations as lines; Chen Tables 8-9 over epochs)."""

    x: str = Field(description="the param on the x axis, e.g. lambda")
    metric: str
    label: str = Field("", description="line label template over params; empty: one line")
    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        curve(line_frame(ctx.frame, self, ctx.evidence), self, path)


def line_frame(frame: pd.DataFrame, spec: Line, evidence: Evidence | None = None) -> pd.DataFrame:
    """Long frame (label, x, value) of a final metric against the param `spec.x`; with `evidence`, each
    point's 95% interval (`low`, `high`: over its runs' items, and seeds where it has several)."""
    frame = seed_sorted(filter_runs(frame, spec.where, f"figure {spec.name}"))
    require_columns(frame, [spec.x, spec.metric], f"figure {spec.name}")
    labels = row_labels(frame, spec.label, f"figure {spec.name}") if spec.label else [""] * len(frame)
    points = pd.DataFrame({"label": labels, "x": frame[spec.x], "value": frame[spec.metric]})
    if evidence is not None:
        points["run_id"] = frame["run_id"]
    points = points.dropna()
    if evidence is not None:
        for _, group in points.groupby(["label", "x"], sort=False):
            values = evidence.resampled(list(group.run_id), [spec.metric]).get(spec.metric)
            if values is not None:
                points.loc[group.index, ["low", "high"]] = interval(values)
    return points
