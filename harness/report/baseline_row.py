"""`harness report STUDY --baseline ROW`: the row every other row of a study's tables is compared with,
chosen on the command line (a report spec names it per table, `baseline:`). Each other row then prints its
paired difference from it with a 95% interval and a dagger where it holds (harness.report.table_stats)."""

from __future__ import annotations

import pandas as pd

from harness.errors import HarnessError, did_you_mean
from harness.report.spec import ReportSpec


def with_baseline(spec: ReportSpec, row: str, frame: pd.DataFrame) -> ReportSpec:
    """`spec` with `row` as the baseline of each runs table that has such a row (matched as printed, spaces
    around `=` aside: `lambda=0.1` is `lambda = 0.1`); an error naming the rows where no table has it."""
    from harness.report.parts.runs_table import RunsTable, runs_summary

    tables, labels, found = [], [], False
    for table in spec.tables:
        if isinstance(table, RunsTable):
            try:
                shown = [str(label) for label in runs_summary(frame, table)[0].index]
            except HarnessError:  # a table these runs cannot fill: it is reported as not built
                shown = []
            labels += shown
            match = [label for label in shown if _plain(label) == _plain(row)]
            if match:
                table, found = table.model_copy(update={"baseline": match[0]}), True
        tables.append(table)
    if not found:
        rows = list(dict.fromkeys(labels))
        hint = did_you_mean(row, rows, f"its rows: {'; '.join(rows) or 'none'}")
        raise HarnessError(f"--baseline {row!r}: no table of {spec.study} has that row; {hint}")
    return spec.model_copy(update={"tables": tables})


def _plain(label: str) -> str:
    return "".join(label.split()).lower()
