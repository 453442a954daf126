"""Figures: a heatmap of one metric over a two-parameter grid, the best cell outlined; curves of a metric
during training, one line per label; a final metric against a parameter (lines); grouped bars, or the
mean change between pairs of runs."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.errors import HarnessError  # noqa: E402
from harness.report.collect import filter_runs, require_columns, row_labels  # noqa: E402
from harness.report.names import SHORT_NAMES  # noqa: E402
from harness.report.table_stats import seed_sorted  # noqa: E402
from harness.report.tables import grid_frame  # noqa: E402
from harness.stats.compare import interval  # noqa: E402

if TYPE_CHECKING:
    from harness.report.evidence import Evidence
    from harness.report.parts.bar import Bar
    from harness.report.parts.curve import Curve
    from harness.report.parts.heatmap import Heatmap
    from harness.report.parts.line import Line

GREEK = {"lambda": "λ", "tau": "τ"}
SCORES = {
    "spearman": "Spearman x 100", "pearson": "Pearson x 100",
    "spearman_wmean": "weighted-mean Spearman x 100", "spearman_mean": "mean Spearman x 100",
    "wmean": "mean of the weighted-mean Spearman x 100", "avg": "average Spearman x 100",
    "acc": "accuracy (%)", "f1": "F1 (%)", "mcc": "MCC x 100", "loss": "loss", "overall": "overall score",
    "overall_r01": "overall score ((r + 1) / 2 for STS)",
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


def _title(ax: plt.Axes, text: str) -> None:
    """A title wrapped to the figure's width (about 9 characters an inch), never clipped."""
    ax.set_title(textwrap.fill(text, max(24, int(ax.figure.get_figwidth() * 9))), fontsize=11)


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
    _title(ax, spec.title or in_words(spec.metric))
    fig.colorbar(image, ax=ax, label=textwrap.fill(in_words(spec.metric), 40))
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


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


def curve(points: pd.DataFrame, spec: Curve | Line, path: Path) -> None:
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
    _title(ax, (spec.title or in_words(spec.metric)) + bars)
    ax.grid(alpha=0.3)
    if points["label"].astype(str).str.len().any():
        ax.legend(fontsize=8)
    _save(fig, path)


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
    _title(ax, spec.title or spec.name)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    _save(fig, path)


def _save(fig: plt.Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
