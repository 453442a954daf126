"""`kind: projection`: SST dev embeddings in 2-D, one panel per run (Phillips Fig. 3)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from harness.report.parts.base import FigurePart, PartContext, register_part


@register_part("projection")
class Projection(FigurePart):
    """SST dev embeddings of the named runs (saved with `save_embeddings: true`) in 2-D, coloured by the
    sentiment label, one panel per run (Phillips Fig. 3): UMAP where `umap-learn` is installed, else t-SNE."""

    label: str = Field(description="label template over params, e.g. '{variant}'")
    runs: list[str] = Field(min_length=1, description="labels of the runs drawn, one panel each")
    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        from harness.report.projection import projection

        projection(ctx.tracker, ctx.frame, self, path)
