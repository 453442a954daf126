"""Claim verdicts (harness.report.verdicts) from given resamples: a row's observed value is its seeds'
mean, a best-of-grid claim reports the runner-up's margin, each claim gets its own outcomes of the Holm
family, a best-of-grid claim on part of the paper's grid never plainly holds, and each claim's size is
judged against the paper's difference for the same pair (read from the reference blocks for a grid)."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.claim_spec import BestClaim, CompareClaim, EquivalentClaim, GainClaim, TrendClaim
from harness.report.parts.runs_table import RunsTable
from harness.report.verdicts import PARTIAL, judge_claims
from harness.stats.compare import HOLDS, REVERSED
from harness.stats.equivalence import ABOVE_PAPER, AS_PAPER, BELOW_PAPER
from tests.report.known_resamples import around, known_evidence

METRIC = "STSBenchmark.spearman"


def runs(rows: list[tuple[str, float, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["run_id", "tau", "seed", METRIC])


def compare(better: float, worse: float, paper: tuple[float, float] | None = None) -> CompareClaim:
    return CompareClaim(id=f"c{better}", source="Liao 4.4", text="t", metric=METRIC,
                        better={"tau": better}, worse={"tau": worse}, paper=paper)  # fmt: skip


BEST = BestClaim(id="best", kind="best", source="Liao Table 7", text="t", metric=METRIC, by=["tau"],
                 best={"tau": 1.0})  # fmt: skip
GRID = runs([("t1", 1.0, 1, 10.0), ("t5", 0.5, 1, 8.0), ("t01", 0.1, 1, 2.0)])


def grid_evidence(frame: pd.DataFrame = GRID):  # noqa: ANN201
    """Each run's resamples close to its value (spread 0.1)."""
    pairs = enumerate(zip(frame.run_id, frame[METRIC], strict=True))
    return known_evidence({run: around(value, i) for i, (run, value) in pairs}, METRIC)


def test_a_rows_observed_value_is_the_mean_of_its_seeds() -> None:
    frame = runs([("a1", 1.0, 1, 10.0), ("a2", 1.0, 2, 10.4), ("b1", 0.1, 1, 5.0), ("b2", 0.1, 2, 5.0)])
    (verdict,) = judge_claims([compare(1.0, 0.1)], frame, grid_evidence(frame), at_setting=True)
    assert verdict.difference == pytest.approx(5.2)  # (10 + 10.4) / 2 - 5; the best seed would say 5.4
    assert verdict.verdict == HOLDS and verdict.covers.startswith("seeds and items (2 seeds")


def test_best_of_grid_reports_the_runner_ups_margin_and_each_claim_gets_its_own_outcomes() -> None:
    """tau = 1.0 beats 0.5 by 2 and 0.1 by 8: the claim's difference is the closer margin, 2. A second
    claim, 0.1 beats 1.0, is reversed: its outcome is the family's third, not the best claim's second."""
    grid, reversed_claim = judge_claims([BEST, compare(0.1, 1.0)], GRID, grid_evidence(), at_setting=True)
    assert grid.difference == pytest.approx(2.0) and grid.cells == 3 and grid.share_best == 1.0
    assert grid.verdict == HOLDS
    assert reversed_claim.verdict == REVERSED and reversed_claim.difference == pytest.approx(-8.0)


def test_a_best_claim_on_part_of_the_papers_grid_holds_only_on_its_cells() -> None:
    """The paper profile runs 6 values of tau; the runs hold 3: "holds on 3 of 6 cells", never "holds"."""
    six = [{"tau": t, "seed": 1, "lr": 2e-5} for t in (0.1, 0.3, 0.5, 0.7, 0.9, 1.0)]
    (partial,) = judge_claims([BEST], GRID, grid_evidence(), True, configurations=six)
    assert partial.verdict == PARTIAL and partial.shown == "holds on 3 of 6 cells" and partial.grid_cells == 6
    three = [{"tau": t, "seed": s} for t in (0.1, 0.5, 1.0) for s in (1, 2)]  # seeds are not cells
    (whole,) = judge_claims([BEST], GRID, grid_evidence(), True, configurations=three)
    assert whole.verdict == HOLDS and whole.shown == HOLDS


def test_a_claims_size_is_judged_against_the_papers_difference_for_the_same_pair() -> None:
    """Harness +8 (10 - 2, +-0.14): the paper's +8.44 lies above its interval ("below the paper") yet
    within +-2 (reproduced); the paper's +10 lies above it and 2 off (not reproduced)."""
    near, far, same = (compare(1.0, 0.1, paper) for paper in ((70.05, 61.61), (12.0, 2.0), (10.0, 2.0)))
    for claim in (near, far, same):
        (verdict,) = judge_claims([claim], GRID, grid_evidence(), True)
        assert verdict.difference == pytest.approx(8.0, abs=0.02)
        if claim is near:
            assert verdict.size == BELOW_PAPER and verdict.reproduced and verdict.margin == 2.0
        elif claim is far:
            assert verdict.size == BELOW_PAPER and not verdict.reproduced and verdict.p_tost > 0.4
        else:
            assert verdict.size == AS_PAPER and verdict.reproduced and verdict.p_tost == 0.0
    (unpaired,) = judge_claims([compare(1.0, 0.1)], GRID, grid_evidence(), True)  # no paper values
    assert unpaired.size == "" and unpaired.reproduced is None


def test_a_best_claims_paper_pair_and_margin_come_from_the_reference_blocks() -> None:
    """The harness's runner-up is tau 0.5 (margin +2); Table 7's values give the same pair +1 (10 - 9)
    and the paper's own margin over its runner-up, tau 0.3, +0.5."""
    table = RunsTable(name="tau_sts", kind="runs", label="tau = {tau}", where={"lr": 2e-5},
                      columns={"Avg.": METRIC, "other": "STS12.spearman"},
                      reference={f"tau = {t}": {"Avg.": v} for t, v in ((0.1, 3.0), (0.3, 9.5), (0.5, 9.0),
                                                                       (1.0, 10.0))})  # fmt: skip
    (verdict,) = judge_claims([BEST], GRID, grid_evidence(), True, tables=[table])
    assert verdict.paper_difference == pytest.approx(1.0) and verdict.paper_margin == pytest.approx(0.5)
    assert verdict.difference == pytest.approx(2.0, abs=0.02) and verdict.size == ABOVE_PAPER
    assert verdict.reproduced  # 1 point off, within +-2
    elsewhere = table.model_copy(update={"where": {"lr": 1e-3}})  # another setting's table: not this grid
    (unread,) = judge_claims([BEST.model_copy(update={"among": {"lr": 2e-5}})],
                             GRID.assign(lr=2e-5), grid_evidence(GRID.assign(lr=2e-5)), True,
                             tables=[elsewhere])  # fmt: skip
    assert unread.paper_difference is None and unread.paper_margin is None


def test_what_a_paired_interval_covers_names_both_rows_seeds() -> None:
    frame = runs([("a1", 1.0, 1, 10.0), ("a2", 1.0, 2, 20.0), ("b1", 0.1, 1, 5.0)])
    (verdict,) = judge_claims([compare(1.0, 0.1)], frame, grid_evidence(frame), at_setting=True)
    assert verdict.covers == "seeds and items (1 and 2 seeds, few: Student's t on the seeds)"


def test_a_trend_is_judged_step_by_step_and_shows_its_weakest_step() -> None:
    """tau 0.1 -> 0.5 -> 1.0 scores 2, 8, 10: rising holds on both steps, the weakest +2 (0.5 to 1.0);
    falling is reversed, its weakest step -6 (0.1 to 0.5). The paper's 0.5 -> 1.0 step (+1) is the rising
    claim's paper difference."""
    rising = TrendClaim(
        id="up", kind="trend", source="s", text="t", metric=METRIC, by="tau", direction="increasing"
    )
    paper = {f"tau = {t}": {"Avg.": v} for t, v in ((0.1, 3.0), (0.5, 9.0), (1.0, 10.0))}
    table = RunsTable(name="t", kind="runs", label="tau = {tau}", columns={"Avg.": METRIC}, reference=paper)
    up, down = judge_claims([rising, rising.model_copy(update={"id": "down", "direction": "decreasing"})],
                            GRID, grid_evidence(), True, tables=[table])  # fmt: skip
    assert up.verdict == HOLDS and up.cells == 3 and len(up.comparisons) == 2
    assert up.difference == pytest.approx(2.0, abs=0.02) and up.paper_difference == pytest.approx(1.0)
    assert up.paper_says == "supports" and down.paper_says == "contradicts"
    assert down.verdict == REVERSED and down.difference == pytest.approx(-6.0, abs=0.02)


def test_a_gain_is_the_difference_of_two_paired_differences() -> None:
    """(tau 1.0 - tau 0.1) = 8 against (tau 1.0 - tau 0.5) = 2: a gain of 6 holds; the other way round it is
    reversed. The paper's [[10, 3], [10, 9]] gives +6."""
    than = {"metric": METRIC, "better": {"tau": 1.0}, "worse": {"tau": 0.5}}
    gain = GainClaim(id="g", kind="gain", source="s", text="t", metric=METRIC, better={"tau": 1.0},
                     worse={"tau": 0.1}, than=than, paper=((10.0, 3.0), (10.0, 9.0)))  # fmt: skip
    flipped = GainClaim(**{**gain.model_dump(), "id": "f", "than": {**than, "worse": {"tau": 0.1}},
                           "worse": {"tau": 0.5}})  # fmt: skip
    holds, reversed_ = judge_claims([gain, flipped], GRID, grid_evidence(), True)
    assert holds.verdict == HOLDS and holds.difference == pytest.approx(6.0, abs=0.03)
    assert holds.paper_difference == pytest.approx(6.0) and holds.size == AS_PAPER and holds.reproduced
    assert reversed_.verdict == REVERSED and reversed_.difference == pytest.approx(-6.0, abs=0.03)


def test_no_difference_is_judged_by_two_one_sided_tests_within_the_margin() -> None:
    """tau 1.0 (10) against a twin at 10.05: equivalent within +-2 (holds); against tau 0.1 (2): the whole
    interval lies beyond the margin (reversed); neither enters the directional family."""
    frame = runs([("t1", 1.0, 1, 10.0), ("t9", 0.9, 1, 10.05), ("t01", 0.1, 1, 2.0)])
    same = EquivalentClaim(id="same", kind="equivalent", source="s", text="t", metric=METRIC,
                           better={"tau": 1.0}, worse={"tau": 0.9}, paper=(70.0, 70.5))  # fmt: skip
    apart = same.model_copy(update={"id": "apart", "worse": {"tau": 0.1}})
    first, second = judge_claims([same, apart], frame, grid_evidence(frame), True)
    assert first.verdict == HOLDS and first.p_tost == 0.0 and first.margin == 2.0 and first.p_holm is None
    assert second.verdict == REVERSED and second.p_tost == 1.0
    assert first.paper_says == "supports"
