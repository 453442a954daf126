"""`kind: line`: a final metric against a parameter, one line per label (Liao's ablations as lines)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from harness.report.parts.base import FigurePart, Filtered, PartContext, register_part


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
        from harness.report.figures import curve, line_frame

        curve(line_frame(ctx.frame, self, ctx.evidence), self, path)
