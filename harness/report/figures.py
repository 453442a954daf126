"""What the figure kinds share (each kind is one file in harness/report/parts/): matplotlib on its file
backend, a metric's name in words for axes and titles, wrapped titles, saving, and the line drawing of
both a curve during training and a final metric against a parameter."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Protocol, cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from harness.report.names import SHORT_NAMES  # noqa: E402


class Plotted(Protocol):
    """What `curve` reads of a figure kind (curve, line); read-only, so a narrower field type (curve's
    `x: Literal["step", "epoch"]`) matches."""

    @property
    def x(self) -> str: ...
    @property
    def metric(self) -> str: ...
    @property
    def title(self) -> str: ...


GREEK = {"lambda": "λ", "tau": "τ"}
SCORES = {
    "spearman": "Spearman x 100", "pearson": "Pearson x 100",
    "spearman_wmean": "weighted-mean Spearman x 100", "spearman_mean": "mean Spearman x 100",
    "wmean": "mean of the weighted-mean Spearman x 100", "avg": "average Spearman x 100",
    "acc": "accuracy (%)", "f1": "F1 (%)", "mcc": "MCC x 100", "loss": "loss", "overall": "overall score",
    "overall_r01": "overall score ((r + 1) / 2 for STS)",
    "devacc": "validation accuracy (%)", "devavg": "mean validation accuracy (%)",
    "objective": "objective (dev score of the tested model)", "seconds": "seconds",
}  # fmt: skip
SECTIONS = {"dev": "dev", "train": "training", "train_set": "train-set"}


def in_words(metric: str) -> str:
    """An axis or colourbar label for a metric key: `STS12-16.wmean` -> 'STS12-16 mean of the weighted-mean
    Spearman x 100', `dev.sst.acc` -> 'dev sst accuracy (%)'; unknown parts stay as they are."""
    parts = metric.split(".")
    section = SECTIONS.get(parts[0]) if len(parts) > 1 else None
    parts = parts[1:] if section else parts
    words = [SHORT_NAMES.get(p, SCORES.get(p, p)) for p in parts if p != "best"]
    return " ".join([*([section] if section else []), *words]) + (" (best)" if parts[-1] == "best" else "")


def titled(ax: plt.Axes, text: str) -> None:
    """A title wrapped to the figure's width (about 9 characters an inch), never clipped."""
    figure = cast(Figure, ax.figure)  # the harness's axes are a figure's own (none are a SubFigure's)
    ax.set_title(textwrap.fill(text, max(24, int(figure.get_figwidth() * 9))), fontsize=11)


def curve(points: pd.DataFrame, spec: Plotted, path: Path) -> None:
    """One line per label: the mean over its runs at each x, the min-max spread shaded when several; with
    `low` / `high` columns (a final metric's 95% intervals, `line_frame`), error bars at each point."""
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for label, group in points.groupby("label", sort=False):
        stats = group.groupby("x")["value"].agg(["mean", "min", "max", "count"]).sort_index()
        drawn = ax.plot(stats.index, stats["mean"], marker="o", markersize=3, label=str(label) or None)
        if (stats["count"] > 1).any():
            ax.fill_between(stats.index, stats["min"], stats["max"], alpha=0.2)
        if "low" in group and group["low"].notna().all():
            ends = group.groupby("x")[["low", "high"]].first().sort_index()
            below, above = stats["mean"] - ends["low"], ends["high"] - stats["mean"]
            ax.errorbar(stats.index, stats["mean"], yerr=[below.clip(lower=0), above.clip(lower=0)],
                        fmt="none", ecolor=drawn[0].get_color(), capsize=3, alpha=0.7)  # fmt: skip
    ax.set_xlabel(GREEK.get(spec.x, spec.x))
    ax.set_ylabel(textwrap.fill(in_words(spec.metric), 40))
    bars = " (bars: 95% intervals)" if "low" in points and points["low"].notna().any() else ""
    titled(ax, (spec.title or in_words(spec.metric)) + bars)
    ax.grid(alpha=0.3)
    if points["label"].astype(str).str.len().any():
        ax.legend(fontsize=8)
    save(fig, path)


def save(fig: plt.Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
