"""`kind: heatmap`: one metric over a two-parameter grid, the best cell outlined."""

from __future__ import annotations

from pathlib import Path

from harness.report.parts.base import FigurePart, GridSpec, PartContext, register_part


@register_part("heatmap")
class Heatmap(FigurePart, GridSpec):
    """One metric over two parameters as a heatmap, the best cell outlined (Liao Tables 6-7 as a picture)."""

    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        from harness.report.figures import heatmap

        heatmap(ctx.frame, self, path)
