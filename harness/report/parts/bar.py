"""`kind: bar`: grouped bars, or the mean change between pairs of runs (David et al. Figs. 4-5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import Field

from harness.errors import HarnessError
from harness.report.collect import filter_runs, require_columns, row_labels
from harness.report.figures import plt, save, titled
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
        bar(*bar_frame(ctx.frame, self), self, path)


def bar_frame(frame: pd.DataFrame, spec: Bar) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(mean, std): one row per bar (a label, or "after - before" over the `change` pairs), one column
    per group (metric)."""
    frame = filter_runs(frame, spec.where, f"figure {spec.name}")
    require_columns(frame, list(spec.columns.values()), f"figure {spec.name}")
    values = pd.DataFrame(
        {group: frame[metric].to_numpy() for group, metric in spec.columns.items()},
        index=row_labels(frame, spec.label, f"figure {spec.name}"),
    ).groupby(level=0, sort=False)
    mean, std = values.mean(), values.std(ddof=1)
    if spec.change is None:
        return mean, std
    pairs = [(b, a) for b, a in spec.change if b in mean.index and a in mean.index]  # those a profile ran
    if not pairs:
        raise HarnessError(f"figure {spec.name}: no pair of 'change' has runs; fix reports/<study>.yaml")
    changes = pd.DataFrame([mean.loc[after] - mean.loc[before] for before, after in pairs])
    name = "mean change" + (f" (n={len(changes)})" if len(changes) > 1 else "")
    return changes.mean().to_frame(name).T, changes.std(ddof=1).to_frame(name).T


def bar(mean: pd.DataFrame, std: pd.DataFrame, spec: Bar, path: Path) -> None:
    """Grouped bars, one group per column, with std error bars where there is a spread."""
    groups, bars = list(mean.columns), list(mean.index)
    width = 0.8 / len(bars)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(groups) + 2), 3.8))
    for i, label in enumerate(bars):
        errors = std.loc[label].fillna(0).to_numpy() if label in std.index else None
        ax.bar(np.arange(len(groups)) + (i - (len(bars) - 1) / 2) * width, mean.loc[label].to_numpy(),
               width, yerr=errors, capsize=3, label=str(label))  # fmt: skip
    ax.set_xticks(range(len(groups)), groups)
    ax.axhline(0, color="black", linewidth=0.8)
    titled(ax, spec.title or spec.name)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    save(fig, path)
