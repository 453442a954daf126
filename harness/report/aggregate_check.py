"""Whether each aggregate a paper prints (Avg., Overall) equals its recomputation from the same row's own
printed cells: a transcription error, or a paper's own slip, shows here before any comparison uses it.

An aggregate is recomputed as the harness defines the same metric (the papers' definitions):
- the task registry's aggregates (`STS12-16.wmean`, `transfer.avg`, ...): the mean of their members'
  scores (Liao Tables 2-7: Avg. of STS12-16, of the eight transfer tasks);
- `dev.overall` = (SST accuracy + Quora accuracy + STS Pearson r) / 3 (Chen), and `dev.overall_r01` = (SST
  accuracy + Quora accuracy + (r + 1) / 2) / 3 (David et al.; harness.evaluate.cs224n_scores).
A row whose table lacks a member's column, or whose reference lacks its value, is not checked. Each
printed value is rounded to the row's last digit u (the most decimals among the row's values: the papers
print a row to one precision, and drop trailing zeros, Liao's "99.6" and "73." beside "86.94"), so the
recomputation from rounded members may differ from the printed aggregate by up to u / 2 + the combination
of the members' u / 2 (for a mean u / 2; the r of `overall_r01` counts half): a mismatch is a difference
beyond that, never rounding."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import cast

from harness.evaluate.registry import aggregates
from harness.report.parts.runs_table import RunsTable

CS224N = ("dev.sst.acc", "dev.quora.acc", "dev.sts.pearson")
Combine = Callable[[list[float]], float]


def definitions() -> dict[str, tuple[tuple[str, ...], Combine]]:
    """Aggregate metric -> (its member metrics, how they combine)."""
    out: dict[str, tuple[tuple[str, ...], Combine]] = {
        "dev.overall": (CS224N, lambda v: (v[0] + v[1] + v[2]) / 3),
        "dev.overall_r01": (CS224N, lambda v: (v[0] + v[1] + (v[2] + 1) / 2) / 3),
    }
    for name, declared in aggregates().items():
        members = tuple(f"{m}.{declared.score}" for m in declared.members)
        out[name] = (members, lambda v: sum(v) / len(v))
    return out


@dataclass(frozen=True)
class Mismatch:
    """A printed aggregate that its own row's cells do not give."""

    table: str
    source: str
    row: str
    column: str
    printed: float
    recomputed: float
    digits: int  # the row's decimals

    def __str__(self) -> str:
        printed, recomputed = f"{self.printed:.{self.digits}f}", f"{self.recomputed:.{self.digits + 1}f}"
        where = f"{self.source}, row {self.row}"
        return f"{where}: {self.column} printed {printed}, its own cells give {recomputed}"


def _unit(values: Iterable[float]) -> float:
    """The row's last printed digit: the most decimals among its values (0.53 and 0.496: 0.001)."""
    # printed values are finite: an int exponent ('n', 'N', 'F' are NaN's and infinity's)
    exponents = [cast(int, Decimal(repr(float(v))).normalize().as_tuple().exponent) for v in values]
    return 10.0 ** min(min(exponents), 0)


def _rows(table: RunsTable) -> Iterable[tuple[str, str, dict[str, float]]]:
    """(source, label, values) of every paper row the table prints: its reference and same-setup rows."""
    for label, values in table.reference.items():
        yield table.reference_source, label, values
    for label, elsewhere in table.same_setup.items():
        for source, values in elsewhere.items():
            yield source, label, values


def check_table(table: object) -> list[Mismatch]:
    """The mismatched aggregates of one table's paper rows (none for tables without them)."""
    if not isinstance(table, RunsTable):
        return []
    known, found = definitions(), []
    header_of = {metric: header for header, metric in table.columns.items()}
    for header, metric in table.columns.items():
        if metric not in known:
            continue
        members, combine = known[metric]
        if any(m not in header_of for m in members):
            continue
        for source, label, values in _rows(table):
            parts = [values.get(header_of[m]) for m in members]
            if header not in values or any(p is None for p in parts):
                continue
            recomputed = combine(parts)  # type: ignore[arg-type]
            unit = _unit([values[header], *parts])  # type: ignore[list-item]
            half = unit / 2
            # the combination is linear: the members' rounding moves it by at most combine(half digits) less
            # its constant part (combine of zeros)
            slack = combine([half] * len(parts)) - combine([0.0] * len(parts))
            if abs(recomputed - values[header]) > (half + slack) * (1 + 1e-9):
                digits = round(-math.log10(unit))
                found.append(Mismatch(table.name, source, label, header, values[header], recomputed, digits))
    return found


def check_tables(tables: Iterable[object]) -> list[Mismatch]:
    return [m for table in tables for m in check_table(table)]
