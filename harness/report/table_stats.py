"""The statistics a table prints beside its numbers (docs/statistics.md): each cell's 95% interval, a
dagger on cells that differ from the spec's `baseline` row beyond their paired interval (Holm over the
table's comparisons), and, where the runs are at the paper's setting, whether each of the paper's values
lies inside, above or below the harness's interval, and whether the harness's value is equivalent to it
within the report's stated margin (TOST, harness.stats.equivalence: reproduced or not).

A cell is (row label, column header): its runs (one per seed, in seed order) and its metric; a derived
row or column (a mean or a difference of others) is resampled as the same op over the resamples of the
cells it is made of, so a "Difference" row gets a paired interval."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from harness.report.collect import varying_params
from harness.report.evidence import Evidence
from harness.stats.compare import ALPHA, Difference, holm, interval
from harness.stats.equivalence import Equivalence, Margins

Cell = tuple[str, str]
FEW_SEEDS = 3  # rows of this many seeds or fewer: the caption says the seed component is small-sample
INSIDE, ABOVE, BELOW = "inside", "above", "below"  # where the paper's value lies against the interval


@dataclass
class TableStats:
    """What `_render` prints: intervals, daggers and reproduction marks by cell, and the caption's words."""

    intervals: dict[Cell, tuple[float, float]] = field(default_factory=dict)
    daggers: set[Cell] = field(default_factory=set)
    reproduced: dict[Cell, str] = field(default_factory=dict)
    equivalent: dict[Cell, bool] = field(default_factory=dict)  # TOST within the margin, per paper value
    margins: Margins = field(default_factory=Margins)
    seeds: set[int] = field(default_factory=set)  # the rows' numbers of seeds
    comparisons: int = 0
    baseline: str | None = None
    missing_baseline: str | None = None  # the spec's baseline, where these runs have no such row
    mixed: int = 0  # cells whose runs are several configurations (no interval)
    resamples: int = 0
    # columns ("*": the whole table) whose best was compared with the runner-up: True where it beats it
    # beyond their paired interval (bold), False where not (a tie); a column absent was not compared
    decided: dict[str, bool] = field(default_factory=dict)
    undecided: list[str] = field(default_factory=list)  # columns ("*") with a best but nothing to compare
    # each row's paired difference from the baseline row, per cell: its 95% interval
    differences: dict[Cell, tuple[float, float]] = field(default_factory=dict)

    def best_mark(self, column: str) -> str:
        """How the best value of a column is marked: "bold" when it beats the runner-up beyond their paired
        interval, "tie" where it does not (a bold would claim more than the runs show), "" where the runs
        have nothing to compare it on (no item record: a dev score)."""
        found = self.decided.get("*", self.decided.get(column))
        return "" if found is None else "bold" if found else "tie"

    def paired(self, label: str, column: str, value: float, digits: int) -> str:
        """A row's paired difference from the baseline (`value`, its difference of means) with its 95%
        interval, `+0.42 [+0.10, +0.74]`; '' where it has none."""
        low_high = self.differences.get((label, column))
        if low_high is None or not np.all(np.isfinite(low_high)) or pd.isna(value):
            return ""
        return f"{value:+.{digits}f} [{low_high[0]:+.{digits}f}, {low_high[1]:+.{digits}f}]"

    def ci(self, label: str, column: str, digits: int) -> str:
        low_high = self.intervals.get((label, column))
        if low_high is None or not np.all(np.isfinite(low_high)):  # undefined: constant predictions
            return ""
        return f"[{low_high[0]:.{digits}f}, {low_high[1]:.{digits}f}]"

    def mark(self, label: str, column: str) -> str:
        return "$^\\dagger$" if (label, column) in self.daggers else ""

    def paper_mark(self, label: str, column: str) -> str:
        where = self.reproduced.get((label, column))
        mark = {ABOVE: "$^\\uparrow$", BELOW: "$^\\downarrow$"}.get(where or "", "")
        return mark + ("$^\\equiv$" if self.equivalent.get((label, column)) else "")

    def caption(self, baseline_shown: str = "") -> str:
        """The caption's sentences: what the intervals cover, the paired differences and daggers, the bold,
        the paper marks."""
        if not self.intervals:
            return (" No interval: these runs have no item records." if not self.mixed else "") + self._bold()
        one = 1 in self.seeds
        covers = " and ".join(
            (["items only (1 seed: seed noise left out, so the spread is understated)"] if one else [])
            + [f"seeds and items ({k} seeds, two levels)" for k in sorted(self.seeds - {1})]
        )
        if any(1 < k <= FEW_SEEDS for k in self.seeds):
            covers += (
                f"; with {FEW_SEEDS} seeds or fewer the seed component rests on 1-2 degrees of freedom and is"
                " widened to Student's t (the few-seeds correction)"
            )
        text = (
            f" Under each row, its 95\\% interval: percentile bootstrap, B = {self.resamples}, over {covers};"
            " docs/statistics.md."
        )
        if self.baseline is not None:
            shown = baseline_shown or self.baseline
            text += (
                f" Under each other row, its paired difference from {shown} (row $-$ {shown}: means, and the"
                " 95\\% interval of the difference, paired on seeds and items). $^\\dagger$: differs from"
                f" {shown} beyond that interval after Holm's correction over the table's {self.comparisons}"
                " comparisons."
            )
        if self.missing_baseline:
            text += f" No dagger: these runs have no row {self.missing_baseline} to compare with."
        if self.mixed:
            text += f" {self.mixed} cell(s) average runs of several configurations: no interval."
        text += self._bold()
        if self.reproduced:
            inside = sum(v == INSIDE for v in self.reproduced.values())
            same, margins = sum(self.equivalent.values()), self.margins.stated("$\\pm$")
            text += (
                f" The paper's values: {inside} of {len(self.reproduced)} inside the harness's interval;"
                " $^\\uparrow$ above it, $^\\downarrow$ below it; $^\\equiv$ reproduced: the harness's value"
                f" equivalent to the paper's within {margins} (two one-sided tests at"
                f" 0.05), {same} of {len(self.equivalent)}."
            )
        return text

    def _bold(self) -> str:
        if not self.decided:
            return ""
        text = " Bold: the best, beyond the paired 95\\% interval of its difference with the runner-up"
        return text + (
            "; $^{=}$: the best, but within it (a tie)." if not all(self.decided.values()) else "."
        )


Vector = Callable[[str, str], np.ndarray | None]
CellDifference = Callable[[Cell, Cell], np.ndarray | None]


def table_stats(
    evidence: Evidence,
    cells: dict[Cell, tuple[list[str], str]],
    derived: Callable[[Vector, str, str, CellDifference], np.ndarray | None],
    shown: list[Cell],
    baseline: str | None,
    reference: dict[Cell, float],
) -> TableStats:
    """Intervals of the `shown` cells (`cells`: a cell's runs and metric; `derived` resamples a derived
    cell from the others), daggers against `baseline`'s row, and where each `reference` value lies and
    whether the harness reproduces it (TOST within the margin of the cell's metric)."""
    stats = TableStats(baseline=baseline, resamples=evidence.resampler.resamples, margins=evidence.margins)

    of_runs = _runs_vector(evidence, cells)

    def vector(label: str, column: str) -> np.ndarray | None:
        if (label, column) in cells:
            return of_runs(label, column)
        return derived(
            vector, label, column, lambda one, other: _difference(evidence, cells, vector, one, other)
        )

    for label, column in shown:
        values = vector(label, column)
        if values is not None:
            stats.intervals[(label, column)] = interval(values)
            if (label, column) in cells:
                stats.seeds.add(len(cells[(label, column)][0]))
    for cell, paper in reference.items():
        if cell in stats.intervals:
            low, high = stats.intervals[cell]
            stats.reproduced[cell] = ABOVE if paper > high else BELOW if paper < low else INSIDE
            metric = cells[cell][1] if cell in cells else ""
            tost = Equivalence.of(vector(*cell), paper, evidence.margins.of(metric))  # type: ignore[arg-type]
            stats.equivalent[cell] = tost.equivalent
    if baseline is not None:
        tested: list[tuple[Cell, Difference]] = []
        for label, column in shown:
            difference = _difference(evidence, cells, vector, (label, column), (baseline, column))
            if label == baseline or difference is None:
                continue
            stats.differences[(label, column)] = interval(difference)
            tested.append(((label, column), Difference.of(float("nan"), difference)))  # p alone counts
        _, rejected = holm([d.p for _, d in tested], ALPHA)
        stats.daggers = {cell for (cell, _), r in zip(tested, rejected, strict=True) if r}
        stats.comparisons = len(tested)
    return stats


def _runs_vector(evidence: Evidence, cells: dict[Cell, tuple[list[str], str]]) -> Vector:
    """A cell of runs' resamples of its metric (`cells`: a cell's runs and metric)."""

    def vector(label: str, column: str) -> np.ndarray | None:
        runs, metric = cells[(label, column)]
        return evidence.resampled(runs, [metric]).get(metric)

    return vector


def _difference(evidence: Evidence, cells: dict[Cell, tuple[list[str], str]], vector: Vector,
                one: Cell, other: Cell) -> np.ndarray | None:  # fmt: skip
    """Resamples of cell `one` minus cell `other`: of their runs, the few-seeds correction made on the
    difference (Evidence.difference), where both have runs of one metric; else of their resamples
    (`vector`, derived cells too)."""
    if one in cells and other in cells and cells[one][1] == cells[other][1]:
        return evidence.difference(cells[one][0], cells[other][0], cells[one][1])
    ours, theirs = vector(*one), vector(*other)
    return None if ours is None or theirs is None else ours - theirs


def mark_ties(stats: TableStats, evidence: Evidence, cells: dict[Cell, tuple[list[str], str]],
              mean: pd.DataFrame, best_overall: bool) -> None:  # fmt: skip
    """Record in `stats.decided` whether each column's (or with `best_overall` the whole table's: "*") best
    cell beats the runner-up beyond the 95% interval of their paired difference (cells with runs only);
    a column with two or more values but no paired difference goes to `stats.undecided`."""
    shown = [c for c in cells if c[0] in mean.index and c[1] in mean.columns]  # a table may show fewer rows
    groups = {"*": shown} if best_overall else {}
    if not best_overall:
        for label, column in shown:
            groups.setdefault(column, []).append((label, column))
    for key, members in groups.items():
        ranked = sorted((c for c in members if not pd.isna(mean.at[c])), key=lambda c: -mean.at[c])
        if len(ranked) < 2:
            continue
        difference = _difference(evidence, cells, _runs_vector(evidence, cells), ranked[0], ranked[1])
        if difference is None:
            stats.undecided.append(key)
            continue
        low, _ = interval(difference)
        stats.decided[key] = bool(low > 0)


def derived_vector(spec: object) -> Callable[[Vector, str, str, CellDifference], np.ndarray | None]:
    """A derived cell's resamples: the spec's op over the cells it is derived from (`derived_rows` over
    rows, `derived_columns` over columns): the mean of their resamples, or a - b as `difference` gives it
    (two cells of runs: corrected as one difference, `Evidence.difference`)."""
    rows, columns = getattr(spec, "derived_rows", {}), getattr(spec, "derived_columns", {})

    def derived(vector: Vector, label: str, column: str, difference: CellDifference) -> np.ndarray | None:
        if label in rows:
            op, sources = rows[label].op, [(other, column) for other in rows[label].of]
        elif column in columns:
            op, sources = columns[column].op, [(label, other) for other in columns[column].of]
        else:
            return None
        if op != "mean":
            return difference(sources[0], sources[1])
        parts = [vector(*cell) for cell in sources]
        found = [part for part in parts if part is not None]
        return np.mean(found, axis=0) if len(found) == len(parts) else None

    return derived


def one_configuration(runs: pd.DataFrame, params: list[str]) -> bool:
    """Whether a cell's runs agree on every one of `params` (the params that vary over the table's runs,
    `config_params`): else their mean has no two-level interval, its runs are not seeds of one
    configuration."""
    return all(runs[param].astype(str).nunique() <= 1 for param in params)


def config_params(frame: pd.DataFrame) -> list[str]:
    """The params that vary over a table's runs, but `seed`: checked per cell by `one_configuration`
    (computed once: `varying_params` looks at every column)."""
    return [c for c in varying_params(frame) if c != "seed"]


def seed_sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs in seed order (a row's seeds in one order everywhere: rows pair by seed)."""
    return frame.sort_values("seed", kind="stable") if "seed" in frame.columns else frame
