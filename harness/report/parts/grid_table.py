"""`kind: grid`: one metric over two parameters as a table (Liao Tables 6-7's lambda x tau)."""

from __future__ import annotations

from pydantic import Field

from harness.report.parts.base import Compared, Derived, GridSpec, PartContext, TablePart, register_part


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
        from harness.report.tables import grid_latex

        return grid_latex(ctx.frame, self, ctx.setting, ctx.evidence)
