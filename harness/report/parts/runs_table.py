"""`kind: runs`: one row per label, one column per metric, the paper's rows beside the harness's (the
papers' main tables: Chen Table 2, David et al. Table 4, SimCSE's STS table)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from pydantic import Field, model_validator

from harness.errors import HarnessError
from harness.report.collect import filter_runs, require_columns, row_labels
from harness.report.parts.base import Compared, Derived, Filtered, PartContext, TablePart, register_part
from harness.report.table_stats import config_params, one_configuration, seed_sorted
from harness.report.tables import derive, render_summary, summary_stats, with_derived_rows

if TYPE_CHECKING:
    from harness.report.evidence import Evidence
    from harness.report.setting import Setting


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
        return runs_latex(ctx.frame, self, ctx.setting, ctx.evidence)


def runs_frame(frame: pd.DataFrame, spec: RunsTable) -> pd.DataFrame:
    """One row per run labelled by `spec.label`, one column per metric (labels repeat across seeds)."""
    if not set(spec.columns.values()) & set(frame.columns):  # some missing: runs of a subset of tasks, "--"
        require_columns(frame, list(spec.columns.values()), f"table {spec.name}")
    labels = [spec.rename.get(label, label) for label in row_labels(frame, spec.label, f"table {spec.name}")]
    table = pd.DataFrame(
        {
            header: frame.get(metric, pd.Series(float("nan"), index=frame.index)).to_numpy()
            for header, metric in spec.columns.items()
        },
        index=pd.Index(labels, name="Model"),
    )
    return table


def runs_summary(frame: pd.DataFrame, spec: RunsTable) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """(mean, sample std, n) per label after `where`, with the derived columns and rows (n 0), in the
    order of `rows`, else the references' order (else the baseline first), then the labels' first
    appearance. n counts the runs with a value: runs of different tasks may share a label, each filling its
    own columns."""
    runs = runs_frame(filter_runs(frame, spec.where, f"table {spec.name}"), spec)
    grouped = runs.groupby(level=0, sort=False)
    mean, std, count = grouped.mean(), grouped.std(ddof=1), grouped.count().max(axis=1)
    for header, derived in spec.derived_columns.items():
        mean[header], std[header] = derive(mean, derived, axis=1), float("nan")
    if spec.rows is not None:  # the labels a profile ran (a smoke profile may run a subset)
        order = [label for label in spec.rows if label in mean.index]
        if not order:
            raise HarnessError(
                f"table {spec.name}: no run labelled {spec.rows}; fix 'rows' in reports/<study>.yaml"
            )
    else:
        first = list(spec.reference) or ([spec.baseline] if spec.baseline else [])  # a paper's order kept
        order = [label for label in first if label in mean.index]
        order += [label for label in mean.index if label not in order]
    mean, std, count = mean.loc[order], std.loc[order], count.loc[order]
    return with_derived_rows(mean, std, count, spec.derived_rows, spec.name)


def runs_latex(
    frame: pd.DataFrame, spec: RunsTable, setting: Setting | None = None, evidence: Evidence | None = None
) -> str:
    """Means (with +- std and n where a label has several runs, e.g. seeds), the best mean per column in
    bold (ties as printed bold alike; derived rows never), and under each label with a `reference` its
    paper's values and the difference harness - paper (a reference whose label has no runs yet is left
    out). `transpose` swaps rows and columns, the paper's values and differences then under each metric."""
    mean, std, count = runs_summary(frame, spec)
    stats = None
    if evidence is not None and spec.intervals:
        runs = seed_sorted(filter_runs(frame, spec.where, f"table {spec.name}"))
        labels = [
            spec.rename.get(label, label) for label in row_labels(runs, spec.label, f"table {spec.name}")
        ]
        cells, mixed, params = {}, [], config_params(runs)
        for label, group in runs.groupby(pd.Index(labels), sort=False):
            for column, metric in spec.columns.items():  # the runs that have the column's metric: a
                scored = group[group[metric].notna()] if metric in group else group.iloc[0:0]  # row may
                if one_configuration(
                    scored, params
                ):  # join runs of other tasks (Chen Table 2's single-task row)
                    cells[(label, column)] = (list(scored.run_id), metric)
                else:
                    mixed.append((label, column))
        stats = summary_stats(evidence, cells, mean, spec, setting, mixed)
    return render_summary(mean, std, count, spec, setting=setting, stats=stats)
