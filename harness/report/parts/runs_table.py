"""`kind: runs`: one row per label, one column per metric, the paper's rows beside the harness's (the
papers' main tables: Chen Table 2, David et al. Table 4, SimCSE's STS table)."""

from __future__ import annotations

from pydantic import Field, model_validator

from harness.report.parts.base import Compared, Derived, Filtered, PartContext, TablePart, register_part


@register_part("runs")
class RunsTable(TablePart, Filtered, Compared):
    """One row per label (runs sharing a label, e.g. seeds, are averaged: mean +- std, n), one column per
    metric; `reference` rows print the paper's own numbers under the harness's, with the difference, and
    give the rows the paper's order. `rows` picks labels and their order; `derived_columns` /
    `derived_rows` add means or differences of others (David et al. Table 9's "Difference" row);
    `transpose` prints the metrics as rows and the labels as columns (David et al.'s layout)."""

    label: str = Field(description="row label template over params, e.g. '{method}-lambda{lambda}'")
    columns: dict[str, str] = Field(description="column header -> MLflow metric")
    digits: int = Field(2, ge=0, le=6)
    caption: str = ""
    reference: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="row label -> {column header: the paper's value}, transcribed from the paper",
    )
    reference_source: str = Field("paper", description="how reference rows are labelled, e.g. 'Chen'")
    same_setup: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict,
        description="row label -> {where else the paper reports this setup, e.g. 'Chen Table 2 (baseline)': "
        "{column: value}}: the paper's own spread for one configuration, printed as a range under the row",
    )
    rename: dict[str, str] = Field(
        default_factory=dict,
        description="label -> shown label; runs renamed alike share a row (Chen Table 2's "
        "single-task row: three runs, one per task)",
    )
    rows: list[str] | None = Field(None, description="the labels shown, in this order (default: all)")
    derived_columns: dict[str, Derived] = Field(default_factory=dict, description="header -> op over headers")
    derived_rows: dict[str, Derived] = Field(default_factory=dict, description="label -> op over labels")
    transpose: bool = Field(False, description="metrics as rows, labels as columns")

    @model_validator(mode="after")
    def _names_exist(self) -> RunsTable:
        headers = set(self.columns) | set(self.derived_columns)
        for label, values in self.reference.items():
            unknown = sorted(set(values) - headers)
            if unknown:
                raise ValueError(f"reference row {label!r} names columns {unknown} the table does not have")
        for label, elsewhere in self.same_setup.items():
            if label not in self.reference:
                raise ValueError(
                    f"same_setup row {label!r} has no reference row; add the paper's values there"
                )
            for source, values in elsewhere.items():
                unknown = sorted(set(values) - headers)
                if unknown:
                    raise ValueError(
                        f"same_setup {label!r} ({source}) names columns {unknown} the table lacks"
                    )
        for header, derived in self.derived_columns.items():
            unknown = sorted(set(derived.of) - set(self.columns))
            if unknown:
                raise ValueError(f"derived column {header!r} uses {unknown}, which are not columns")
        return self

    def latex(self, ctx: PartContext) -> str:
        from harness.report.tables import runs_latex

        return runs_latex(ctx.frame, self, ctx.setting, ctx.evidence)
