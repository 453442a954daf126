"""LaTeX tables (booktabs, best in bold) from the trials frame, via pandas Styler."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from harness.errors import HarnessError
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
    """One row per run labelled by `spec.label`, one column per metric."""
    _require(frame, list(spec.columns.values()), spec.name)
    try:
        labels = [spec.label.format(**row) for row in frame.to_dict("records")]
    except KeyError as exc:
        raise HarnessError(f"table {spec.name}: label uses {exc}, which is not a param of the runs") from None
    table = pd.DataFrame(
        {header: frame[metric].to_numpy() for header, metric in spec.columns.items()},
        index=pd.Index(labels, name="Model"),
    )
    return table


def runs_latex(frame: pd.DataFrame, spec: RunsTable) -> str:
    table = runs_frame(frame, spec).round(spec.digits)  # bold every value that ties the best as printed
    table.index = [escape_latex(i) for i in table.index]
    table.columns = [escape_latex(c) for c in table.columns]
    styler = table.style.format(f"{{:.{spec.digits}f}}", na_rep="--").highlight_max(axis=0, props=BOLD)
    return _booktabs(styler, spec.name, spec.caption)


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
