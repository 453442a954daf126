"""LaTeX tables (booktabs, best in bold) from the trials frame, via pandas Styler."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from harness.errors import HarnessError
from harness.report.collect import row_labels
from harness.report.spec import GridTable, RunsTable

BOLD = "textbf:--rwrap;"  # Styler: wrap the best value in \textbf{}
LATEX_NAMES = {"lambda": r"$\lambda$", "tau": r"$\tau$"}


def _require(frame: pd.DataFrame, columns: list[str], table: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise HarnessError(f"table {table}: the runs have no {', '.join(missing)}; fix reports/<study>.yaml")


def grid_frame(frame: pd.DataFrame, rows: str, columns: str, metric: str, table: str) -> pd.DataFrame:
    """metric pivoted to rows x columns (mean when a cell has several runs)."""
    _require(frame, [rows, columns, metric], table)
    grid = frame.pivot_table(index=rows, columns=columns, values=metric, aggfunc="mean")
    return grid.sort_index().sort_index(axis=1)


def grid_latex(frame: pd.DataFrame, spec: GridTable) -> str:
    grid = grid_frame(frame, spec.rows, spec.columns, spec.metric, spec.name).round(2)  # ties bold alike
    rows, columns = LATEX_NAMES.get(spec.rows, spec.rows), LATEX_NAMES.get(spec.columns, spec.columns)
    grid.index.name = None
    grid.columns.name = f"{rows} \\textbackslash{{}} {columns}"
    styler = (
        grid.style.format("{:.2f}", na_rep="--").format_index("{:g}", axis=0).format_index("{:g}", axis=1)
    )
    return _booktabs(styler.highlight_max(axis=None, props=BOLD), spec.name, spec.caption)


def runs_frame(frame: pd.DataFrame, spec: RunsTable) -> pd.DataFrame:
    """One row per run labelled by `spec.label`, one column per metric (labels repeat across seeds)."""
    _require(frame, list(spec.columns.values()), spec.name)
    labels = row_labels(frame, spec.label, f"table {spec.name}")
    table = pd.DataFrame(
        {header: frame[metric].to_numpy() for header, metric in spec.columns.items()},
        index=pd.Index(labels, name="Model"),
    )
    return table


def runs_summary(frame: pd.DataFrame, spec: RunsTable) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """(mean, sample std, n) per label, in the order the labels first appear."""
    grouped = runs_frame(frame, spec).groupby(level=0, sort=False)
    return grouped.mean(), grouped.std(ddof=1), grouped.size()


def runs_latex(frame: pd.DataFrame, spec: RunsTable) -> str:
    """Means (with +- std and n where a label has several runs, e.g. seeds), the best mean per column in
    bold (ties as printed bold alike), and under each label with a `reference` its paper's values and the
    difference harness - paper (a reference whose label has no runs yet is left out)."""
    mean, std, count = runs_summary(frame, spec)
    order = [label for label in spec.reference if label in mean.index]  # the paper's row order first
    order += [label for label in mean.index if label not in order]
    mean, std, count = mean.loc[order], std.loc[order], count.loc[order]
    digits = spec.digits
    best = mean.round(digits).max()
    rows: list[tuple[str, list[str]]] = []
    for label in mean.index:
        cells = []
        for column in mean.columns:
            value = mean.at[label, column]
            text = "--" if pd.isna(value) else f"{value:.{digits}f}"
            if count[label] > 1 and not pd.isna(std.at[label, column]):
                text += f" $\\pm$ {std.at[label, column]:.{digits}f}"
            if not pd.isna(value) and round(value, digits) == best[column]:
                text = f"\\textbf{{{text}}}"
            cells.append(text)
        name = escape_latex(label) + (f" ($n={count[label]}$)" if count[label] > 1 else "")
        rows.append((name, cells))
        paper = spec.reference.get(label)
        if paper:
            unique = "{}" * len(rows)  # an empty group keeps the reference rows' labels distinct
            source = escape_latex(spec.reference_source)
            rows.append((f"\\quad {source}{unique}",
                         [f"{paper[c]:.{digits}f}" if c in paper else "" for c in mean.columns]))  # fmt: skip
            rows.append((f"\\quad $\\Delta${unique}", [
                f"{mean.at[label, c] - paper[c]:+.{digits}f}" if c in paper and not pd.isna(mean.at[label, c])
                else "" for c in mean.columns
            ]))  # fmt: skip
    shown = pd.DataFrame([cells for _, cells in rows], index=[name for name, _ in rows],
                         columns=[escape_latex(c) for c in mean.columns])  # fmt: skip
    return _booktabs(shown.style, spec.name, spec.caption)


def _booktabs(styler: Styler, name: str, caption: str) -> str:
    """A centred booktabs table, placed where it is written ([H]), numbers right-aligned."""
    return styler.to_latex(
        hrules=True,
        caption=caption or None,
        label=f"tab:{name}",
        position="H",
        position_float="centering",
        column_format="l" + "r" * styler.data.shape[1],
    )


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    **{char: "\\" + char for char in "&%$#_{}"},
}  # fmt: skip


def escape_latex(text: str) -> str:
    """Plain text for LaTeX (table labels and headers, the report's title): the characters pandas
    Styler's `escape="latex"` escapes; the one escaper of the report."""
    return "".join(LATEX_SPECIALS.get(char, char) for char in str(text))
