"""Claim verdicts (harness.report.verdicts) from given resamples: a row's observed value is its seeds'
mean, a best-of-grid claim reports the runner-up's margin, and each claim gets its own outcomes of the
Holm family."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.claim_spec import BestClaim, CompareClaim
from harness.report.verdicts import judge_claims
from harness.stats.compare import HOLDS, REVERSED
from tests.report.known_resamples import around, known_evidence

METRIC = "STSBenchmark.spearman"


def runs(rows: list[tuple[str, float, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["run_id", "tau", "seed", METRIC])


def compare(better: float, worse: float) -> CompareClaim:
    return CompareClaim(id=f"c{better}", source="Liao 4.4", text="t", metric=METRIC,
                        better={"tau": better}, worse={"tau": worse})  # fmt: skip


def test_a_rows_observed_value_is_the_mean_of_its_seeds() -> None:
    frame = runs([("a1", 1.0, 1, 10.0), ("a2", 1.0, 2, 20.0), ("b1", 0.1, 1, 5.0), ("b2", 0.1, 2, 5.0)])
    evidence = known_evidence({run: around(value, i) for i, (run, _, _, value) in enumerate(frame.values)},
                              METRIC)  # fmt: skip
    (verdict,) = judge_claims([compare(1.0, 0.1)], frame, evidence, at_setting=True)
    assert verdict.difference == pytest.approx(10.0)  # (10 + 20) / 2 - 5; the best seed would say 15
    assert verdict.verdict == HOLDS and verdict.covers.startswith("seeds and items (2 seeds")


def test_best_of_grid_reports_the_runner_ups_margin_and_each_claim_gets_its_own_outcomes() -> None:
    """tau = 1.0 beats 0.5 by 2 and 0.1 by 8: the claim's difference is the closer margin, 2. A second
    claim, 0.1 beats 1.0, is reversed: its outcome is the family's third, not the best claim's second."""
    frame = runs([("t1", 1.0, 1, 10.0), ("t5", 0.5, 1, 8.0), ("t01", 0.1, 1, 2.0)])
    evidence = known_evidence({run: around(value, i) for i, (run, _, _, value) in enumerate(frame.values)},
                              METRIC)  # fmt: skip
    best = BestClaim(id="best", kind="best", source="Liao Table 6", text="t", metric=METRIC, by=["tau"],
                     best={"tau": 1.0})  # fmt: skip
    grid, reversed_claim = judge_claims([best, compare(0.1, 1.0)], frame, evidence, at_setting=True)
    assert grid.difference == pytest.approx(2.0) and grid.cells == 3 and grid.share_best == 1.0
    assert grid.verdict == HOLDS
    assert reversed_claim.verdict == REVERSED and reversed_claim.difference == pytest.approx(-8.0)
