"""`kind: grid`: one metric over two parameters as a table (Liao Tables 6-7's lambda x tau)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from harness.report.collect import filter_runs
from harness.report.parts.base import Compared, Derived, GridSpec, PartContext, TablePart, register_part
from harness.report.table_stats import config_params, one_configuration, seed_sorted
from harness.report.tables import (
    GREEK,
    escape_latex,
    grid_frame,
    render_summary,
    summary_stats,
    with_derived_rows,
)

if TYPE_CHECKING:
    import pandas as pd

    from harness.report.evidence import Evidence
    from harness.report.setting import Setting


@register_part("grid")
class GridTable(TablePart, GridSpec, Compared):
    """The grid as a table, best cell in bold; `rename` shows values under other names (as text, e.g.
    "0.1" or "cosine"), `derived_rows` add means / differences of rows, `reference` prints the paper's
    values under a row (row -> {column: value}, both as shown) with the difference."""

    caption: str = ""
    digits: int = Field(2, ge=0, le=6)
    rename: dict[str, str] = Field(default_factory=dict)
    derived_rows: dict[str, Derived] = Field(default_factory=dict)
    reference: dict[str, dict[str, float]] = Field(default_factory=dict)
    reference_source: str = "paper"

    def latex(self, ctx: PartContext) -> str:
        return grid_latex(ctx.frame, self, ctx.setting, ctx.evidence)


def grid_latex(
    frame: pd.DataFrame, spec: GridTable, setting: Setting | None = None, evidence: Evidence | None = None
) -> str:
    """The metric over rows x columns (mean over a cell's runs), the best cell in bold; `rename` names
    values, `derived_rows` add differences or means of rows (David et al. Table 9), and `reference` rows
    print the paper's values under a row, with the difference."""
    frame = filter_runs(frame, spec.where, f"table {spec.name}")
    grid = grid_frame(frame, spec.rows, spec.columns, spec.metric, spec.name)
    count = frame.pivot_table(index=spec.rows, columns=spec.columns, values=spec.metric, aggfunc="count")
    std = frame.pivot_table(index=spec.rows, columns=spec.columns, values=spec.metric, aggfunc="std")
    std, count = std.reindex_like(grid), count.reindex_like(grid).fillna(0).max(axis=1).astype(int)

    def shown(value: object) -> str:
        text = f"{value:g}" if isinstance(value, int | float) else str(value)
        return spec.rename.get(text, text)

    for table in (grid, std):
        table.index, table.columns = [shown(v) for v in table.index], [shown(v) for v in table.columns]
    count.index = grid.index
    grid, std, count = with_derived_rows(grid, std, count, spec.derived_rows, spec.name)
    rows, columns = (GREEK.get(name, escape_latex(name)) for name in (spec.rows, spec.columns))
    corner = f"{rows} \\textbackslash{{}} {columns}"
    stats = None
    if evidence is not None and spec.intervals:
        cells: dict[tuple[str, str], tuple[list[str], str]] = {}
        mixed, params = [], config_params(frame)
        for (row, column), runs in seed_sorted(frame).groupby([spec.rows, spec.columns], sort=False):
            if one_configuration(runs, params):
                cells[(shown(row), shown(column))] = (list(runs.run_id), spec.metric)
            else:
                mixed.append((shown(row), shown(column)))
        stats = summary_stats(evidence, cells, grid, spec, setting, mixed, best_overall=True)
    return render_summary(
        grid, std, count, spec, best_overall=True, corner=corner, setting=setting, stats=stats
    )
