"""`kind: heatmap`: one metric over a two-parameter grid, the best cell outlined."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.report.collect import filter_runs
from harness.report.figures import GREEK, in_words, plt, titled
from harness.report.parts.base import FigurePart, GridSpec, PartContext, register_part
from harness.report.tables import grid_frame

if TYPE_CHECKING:
    import pandas as pd


@register_part("heatmap")
class Heatmap(FigurePart, GridSpec):
    """One metric over two parameters as a heatmap, the best cell outlined (Liao Tables 6-7 as a picture)."""

    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        heatmap(ctx.frame, self, path)


def heatmap(frame: pd.DataFrame, spec: Heatmap, path: Path) -> None:
    frame = filter_runs(frame, spec.where, f"figure {spec.name}")
    grid = grid_frame(frame, spec.rows, spec.columns, spec.metric, spec.name)
    values = grid.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.2 * grid.shape[1] + 2.5, 0.8 * grid.shape[0] + 1.8))
    image = ax.imshow(values, cmap="viridis", aspect="auto")
    ax.set_xticks(range(grid.shape[1]), [f"{c:g}" for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [f"{r:g}" for r in grid.index])
    ax.set_xlabel(GREEK.get(spec.columns, spec.columns))
    ax.set_ylabel(GREEK.get(spec.rows, spec.rows))
    finite = np.isfinite(values)
    middle = np.nanmean(values) if finite.any() else 0.0
    for (i, j), value in np.ndenumerate(values):
        if np.isfinite(value):
            ax.text(
                j, i, f"{value:.2f}", ha="center", va="center", color="white" if value < middle else "black"
            )
    if finite.any():
        i, j = np.unravel_index(np.nanargmax(values), values.shape)
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    titled(ax, spec.title or in_words(spec.metric))
    fig.colorbar(image, ax=ax, label=textwrap.fill(in_words(spec.metric), 40))
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
