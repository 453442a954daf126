"""The settings box under a report's title: what the runs were (model, data, steps, seeds, precision, the
harness commit), read from the runs' own params, metrics and tags, so a table is never read without the
setting that produced it. A field whose value differs between runs lists its values."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from harness.report.tables import escape_latex
from harness.tracking.study_runs import RAN_AS

# (shown name, the run params it is read from, in order): the first present ones are shown
FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("method", ("method",)),
    ("model", ("model",)),
    ("data", ("train_data", "snli_splits", "train_limit", "contrastive_data", "sup_data", "glue_task")),
    ("batch, lr", ("batch_size", "lr")),
    ("precision", (RAN_AS,)),  # what it ran in (the param may say `auto`)
)
STEPS = "train.steps"  # the steps each run trained (a metric: what ran, not what was asked)


def settings_rows(frame: pd.DataFrame, commit: str) -> list[tuple[str, str]]:
    """(name, value) lines of the box: each FIELDS entry the runs have, their steps, seeds and commit."""
    rows = []
    for name, params in FIELDS:
        present = [p for p in params if p in frame.columns and _set(frame[p])]
        if present:
            rows.append((name, ", ".join(f"{p} {_values(frame[p])}" if len(params) > 1 else _values(frame[p])
                                         for p in present)))  # fmt: skip
    if STEPS in frame.columns:
        rows.append(("steps", _values(frame[STEPS].dropna().astype(int))))
    if "seed" in frame.columns:
        seeds = sorted({int(s) for s in frame["seed"].dropna()})
        rows.append(("seeds", ", ".join(map(str, seeds))))
    rows.append(("commit", f"harness {commit[:10]}"))
    return rows


def settings_box(frame: pd.DataFrame, commit: str) -> str:
    """The box's LaTeX: a two-column list in a frame."""
    lines = "\n".join(f"{escape_latex(k)} & {escape_latex(v)} \\\\" for k, v in settings_rows(frame, commit))
    return (
        "\\noindent\\fbox{\\parbox{\\dimexpr\\linewidth-2\\fboxsep-2\\fboxrule\\relax}{\\small\\textbf{Settings}"
        f"\\\\[2pt]\\begin{{tabular}}{{@{{}}l p{{0.8\\linewidth}}@{{}}}}\n{lines}\n\\end{{tabular}}}}}}"
    )


def _set(values: pd.Series) -> bool:
    """Whether a param was set on any run (not None, NaN or empty)."""
    return any(str(v) not in ("None", "nan", "") for v in values)


def _values(values: Iterable[object]) -> str:
    """One value, or the distinct values in first-seen order where runs differ."""
    distinct = list(dict.fromkeys(str(v) for v in values))
    return distinct[0] if len(distinct) == 1 else " / ".join(distinct) + " (differs between runs)"
