"""A table's statistics (harness.report.table_stats) from given resamples: Holm's correction over the
table's comparisons decides the daggers, a derived difference row is resampled as a - b, runs go in
seed order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.report.evidence import Evidence
from harness.report.parts.base import Derived
from harness.report.table_stats import derived_vector, seed_sorted, table_stats
from harness.stats.compare import interval
from tests.report.known_resamples import B, known_evidence


def evidence(values: dict[str, np.ndarray]) -> Evidence:
    """Evidence whose runs' resamples of metric `m` are `values` (one run per cell: items only)."""
    return known_evidence(values, "m")


def below_zero(count: int) -> np.ndarray:
    """B differences, `count` of them below 0: a two-sided bootstrap p of 2 * count / B."""
    return np.where(np.arange(B) < count, -1.0, 1.0)


def test_daggers_follow_holms_correction_over_the_tables_comparisons() -> None:
    """Three rows against the baseline. x at p = 0.03 is below 0.05 but not below 0.05 / 3, Holm's first
    threshold: no dagger (an uncorrected test would give one). At p = 0.01 it passes Holm's first step."""
    symmetric = np.where(np.arange(B) % 2 == 0, -1.0, 1.0)  # p = 1
    for count, dagger in ((15, False), (5, True)):
        runs = {"base": np.zeros(B), "x": below_zero(count), "y": symmetric, "z": symmetric}
        cells = {(label, "A"): ([label], "m") for label in runs}
        stats = table_stats(evidence(runs), cells, lambda *a: None, list(cells), "base", {})
        assert stats.comparisons == 3
        assert stats.daggers == ({("x", "A")} if dagger else set())


def test_a_derived_difference_row_is_resampled_as_a_minus_b() -> None:
    rng = np.random.default_rng(0)
    runs = {"cos": rng.normal(3.0, 0.5, B), "lin": rng.normal(0.0, 0.5, B)}
    cells = {(label, "A"): ([label], "m") for label in runs}

    class Spec:
        derived_rows = {"Difference": Derived(op="difference", of=["cos", "lin"])}

    shown = [*cells, ("Difference", "A")]
    stats = table_stats(evidence(runs), cells, derived_vector(Spec()), shown, None, {})
    assert stats.intervals[("Difference", "A")] == interval(runs["cos"] - runs["lin"])
    assert stats.intervals[("Difference", "A")][0] > 0  # cos - lin is positive; lin - cos would not be


def test_runs_go_in_seed_order() -> None:
    """Rows pair by seed: every row's runs in the same (seed) order whatever order MLflow returned."""
    frame = pd.DataFrame({"run_id": ["c", "a", "b"], "seed": [3, 1, 2]})
    assert list(seed_sorted(frame).run_id) == ["a", "b", "c"]


def test_the_best_is_bold_only_beyond_the_runner_ups_paired_interval() -> None:
    """Column A: 10 against 5, a clear best (bold); column B: 10 against 9.98, inside the paired interval
    of their difference (a tie, marked "="); over the whole table the best's runner-up is B's 9.98."""
    import pandas as pd

    from harness.report.table_stats import TableStats, mark_ties
    from tests.report.known_resamples import around, known_evidence

    values = {"a": around(10, 1), "b": around(5, 2), "c": around(10, 3), "d": around(9.98, 4)}
    evidence = known_evidence(values, "m")
    cells = {
        ("x", "A"): (["a"], "m"),
        ("y", "A"): (["b"], "m"),
        ("x", "B"): (["c"], "m"),
        ("y", "B"): (["d"], "m"),
    }
    mean = pd.DataFrame({"A": [10.0, 5.0], "B": [10.0, 9.98]}, index=["x", "y"])
    stats = TableStats()
    mark_ties(stats, evidence, cells, mean, best_overall=False)
    assert stats.decided == {"A": True, "B": False}
    assert stats.best_mark("A") == "bold" and stats.best_mark("B") == "tie" and stats.best_mark("C") == ""
    overall = TableStats()
    mark_ties(overall, evidence, cells, mean, best_overall=True)
    assert overall.decided == {"*": False} and overall.best_mark("A") == "tie"


def test_a_derived_difference_of_rows_of_seeds_is_corrected_as_one_difference() -> None:
    """Three seeds a row: the derived row's interval is `Evidence.difference`'s (the few-seeds correction
    made on the difference), not the difference of the two rows' own corrected resamples."""
    rng = np.random.default_rng(1)
    shared = rng.normal(0, 1, B)
    shifts = list(enumerate((-1.0, 0.5, 0.8)))
    values = {f"{row}{j}": offset + shared + rng.normal(0, 1, B) + shift
              for row, offset in (("cos", 3.0), ("lin", 0.0)) for j, shift in shifts}  # fmt: skip
    known = evidence(values)
    cells = {(row, "A"): ([f"{row}{j}" for j in range(3)], "m") for row in ("cos", "lin")}

    class Spec:
        derived_rows = {"Difference": Derived(op="difference", of=["cos", "lin"])}

    stats = table_stats(known, cells, derived_vector(Spec()), [*cells, ("Difference", "A")], None, {})
    corrected = known.difference(cells[("cos", "A")][0], cells[("lin", "A")][0], "m")
    separate = (
        known.resampled(cells[("cos", "A")][0], ["m"])["m"]
        - known.resampled(cells[("lin", "A")][0], ["m"])["m"]
    )
    assert stats.intervals[("Difference", "A")] == interval(corrected)
    assert interval(corrected) != interval(separate)


def test_a_gap_repeated_on_every_resample_holds_paired_though_the_intervals_overlap() -> None:
    """Issue 58 item 5's case: two rows' own intervals ([72.6, 78.0] and [73.0, 78.4]) overlap, but the
    0.42 gap repeats on every resample of the shared seeds and items: the paired difference's interval
    excludes 0, so the row is bold, carries a dagger against the baseline, and prints that interval."""
    from harness.report.table_stats import TableStats, mark_ties

    shared = np.random.default_rng(3).normal(75.3, 1.4, B)  # seed and item noise both rows share
    runs = {"base": shared, "x": shared + 0.42 + np.random.default_rng(4).normal(0, 0.05, B)}
    cells = {(label, "A"): ([label], "m") for label in runs}
    found = evidence(runs)
    stats = table_stats(found, cells, lambda *a: None, list(cells), "base", {})
    (low_x, high_x), (low_base, high_base) = stats.intervals[("x", "A")], stats.intervals[("base", "A")]
    assert low_x < high_base and low_base < high_x  # the rows' own intervals overlap
    low, high = stats.differences[("x", "A")]
    assert (low, high) == interval(runs["x"] - runs["base"]) and 0.3 < low < 0.42 < high < 0.55
    assert stats.daggers == {("x", "A")} and ("base", "A") not in stats.differences
    mean = pd.DataFrame({"A": [float(runs["base"].mean()), float(runs["x"].mean())]}, index=["base", "x"])
    marks = TableStats()
    mark_ties(marks, found, cells, mean, best_overall=False)
    assert marks.best_mark("A") == "bold"
    assert stats.paired("x", "A", 0.42, 2) == f"+0.42 [{low:+.2f}, {high:+.2f}]"
