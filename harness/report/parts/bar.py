"""`kind: bar`: grouped bars, or the mean change between pairs of runs (David et al. Figs. 4-5)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from harness.report.parts.base import FigurePart, Filtered, PartContext, register_part


@register_part("bar")
class Bar(FigurePart, Filtered):
    """Grouped bars: one group per column (metric), one bar per label, seeds averaged with their std as
    error bars (David et al. Fig. 4). With `change`, pairs of labels [before, after]: one bar per column,
    the mean over pairs of after - before, the pairs' std as error bars (David et al. Fig. 5: the mean
    change from cosine to linear prediction functions over eight models)."""

    label: str = Field(description="bar label template over params, e.g. '{variant}'")
    columns: dict[str, str] = Field(description="group name -> MLflow metric")
    change: list[tuple[str, str]] | None = Field(None, description="[before, after] label pairs")
    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        from harness.report.figures import bar, bar_frame

        bar(*bar_frame(ctx.frame, self), self, path)
