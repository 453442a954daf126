"""The paper's own numbers by configuration, read from a report spec's `reference` blocks, so that a claim
can be set against the paper's values of every cell it names (its size, the paper's margin, the paper's
grid) without transcribing them twice.

A `kind: runs` table labels its rows with a template over params (`tau = {tau}`, under `where:
{lambda: 0.5}`); each of its reference labels read back through the template (and `rename` undone) gives
the params of one paper row, and the table's columns say which metric each of its values is. A `kind:
grid` table's reference cell (row, column) is its `rows` and `columns` params' values (`rename` undone),
of its one metric; its derived rows (differences) are not configurations. A paper row
matches a set of params when every param both name has the same value (numbers compared as numbers)."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness.report.parts.grid_table import GridTable
from harness.report.parts.runs_table import RunsTable


@dataclass(frozen=True)
class PaperRow:
    """One of the paper's rows: its params (the table's `where` and those read from its label), its value
    of one metric, and where it was printed."""

    params: dict[str, Any]
    value: float
    source: str


def _template_pattern(template: str) -> tuple[re.Pattern[str], list[str]] | None:
    """A regex reading a label made by `template` back into its fields (None: a template with format specs
    or repeated fields, which cannot be read back unambiguously)."""
    pattern, names = "", []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        pattern += re.escape(literal)
        if name is None:
            continue
        if spec or conversion or name in names or not name.isidentifier():
            return None
        pattern += f"(?P<{name}>.+?)"
        names.append(name)
    return re.compile(f"^{pattern}$"), names


def same(value: Any, wanted: Any) -> bool:
    """Whether two param values agree: as numbers where both read as numbers, else as text (a label read
    back is text, "0.1" against the logged 0.1, which collect.same_value, comparing logged values, leaves
    unequal)."""
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return str(value) == str(wanted)


def _grid_rows(table: GridTable, metric: str) -> list[PaperRow]:
    """A grid table's reference cells as paper rows (module docstring)."""
    if table.metric != metric:
        return []
    raw = {shown: value for value, shown in table.rename.items()}
    fixed = {k: v for k, v in table.where.items() if not isinstance(v, list)}
    out = []
    for row, values in table.reference.items():
        if row in table.derived_rows:
            continue
        for column, value in values.items():
            params = {**fixed, table.rows: raw.get(row, row), table.columns: raw.get(column, column)}
            out.append(PaperRow(params, float(value), f"{table.reference_source}, {row}, {column}"))
    return out


def paper_rows(tables: Iterable[object], metric: str) -> list[PaperRow]:
    """Every reference row of the `kind: runs` and `kind: grid` tables that prints `metric`, with its
    params."""
    rows = []
    for table in tables:
        if isinstance(table, GridTable):
            rows += _grid_rows(table, metric)
        if not isinstance(table, RunsTable) or not table.reference:
            continue
        headers = [h for h, m in table.columns.items() if m == metric]
        read = _template_pattern(table.label)
        if not headers or read is None:
            continue
        pattern, _ = read
        for label, values in table.reference.items():
            value = next((values[h] for h in headers if h in values), None)
            raw = [r for r, shown in table.rename.items() if shown == label] or [label]
            fixed = {k: v for k, v in table.where.items() if not isinstance(v, list)}
            for found in (pattern.match(r) for r in raw):  # labels renamed alike: a row each
                if found is not None and value is not None:
                    params = {**fixed, **found.groupdict()}
                    rows.append(PaperRow(params, float(value), f"{table.reference_source}, {label}"))
    return rows


def paper_grid(rows: list[PaperRow], among: dict[str, Any], by: list[str]) -> dict[tuple, float]:
    """The paper's cells of a grid: the values of `by` -> the paper's value, over the rows that name every
    param of `by` and agree with `among` (the first row of a cell wins: several tables print one cell)."""
    grid: dict[tuple, float] = {}
    for row in rows:
        if not set(by) <= set(row.params):
            continue
        if any(p in row.params and not _accepts(among[p], row.params[p]) for p in among):
            continue
        key = tuple(row.params[p] for p in by)
        if not any(same_cell(key, k) for k in grid):
            grid[key] = row.value
    return grid


def _accepts(wanted: Any, value: Any) -> bool:
    return any(same(value, w) for w in (wanted if isinstance(wanted, list) else [wanted]))


def same_cell(a: tuple, b: tuple) -> bool:
    """Whether two cells' values of `by` agree, value by value (`same`)."""
    return all(same(x, y) for x, y in zip(a, b, strict=True))


def lookup(grid: dict[tuple, float], key: tuple) -> float | None:
    """A cell of `paper_grid` by the runs' values of `by` (None: the paper prints no such cell)."""
    return next((value for cell, value in grid.items() if same_cell(cell, key)), None)
