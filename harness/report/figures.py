"""Figures: a heatmap of one metric over a two-parameter grid, the best cell outlined."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.report.spec import Heatmap  # noqa: E402
from harness.report.tables import grid_frame  # noqa: E402

GREEK = {"lambda": "λ", "tau": "τ"}


def heatmap(frame: pd.DataFrame, spec: Heatmap, path: Path) -> None:
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
    ax.set_title(spec.title or spec.metric)
    fig.colorbar(image, ax=ax, label=spec.metric)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
