"""Intervals, paired differences, Holm and verdicts against independent computations: a paired bootstrap
written here from numpy alone and statsmodels' Holm (the intervals' coverage: tests/stats/test_coverage.py
fast, bench/coverage.py at scale)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from harness.stats.compare import (
    HOLDS,
    INCONCLUSIVE,
    REVERSED,
    Difference,
    best_share,
    holm,
    interval,
    judge,
    p_value,
)
from harness.stats.item_scores import point_scores
from harness.stats.items import item_rows
from harness.stats.resample import Resampler, resampled_scores


def _record(predicted: np.ndarray, gold: np.ndarray) -> pd.DataFrame:
    return item_rows("TREC", "senteval_test", predicted, gold)


def _numpy_paired_bootstrap(a: np.ndarray, b: np.ndarray, gold: np.ndarray, draws: int) -> np.ndarray:
    """The test's own paired bootstrap: the same index vectors for both systems, accuracy x 100."""
    rng = np.random.default_rng(7)
    index = rng.integers(0, len(gold), size=(draws, len(gold)))
    return 100 * ((a[index] == gold[index]).mean(axis=1) - (b[index] == gold[index]).mean(axis=1))


def _systems(n: int, accuracy_a: float, accuracy_b: float, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 6, n)
    luck = rng.random(n)  # shared item difficulty: the same items are hard for both
    a = np.where(luck < accuracy_a, gold, (gold + 1) % 6)
    b = np.where(luck < accuracy_b, gold, (gold + 1) % 6)
    return a, b, gold


@pytest.mark.parametrize(
    ("accuracy_a", "accuracy_b", "expected"),
    [(0.7, 0.7, INCONCLUSIVE), (0.8, 0.6, HOLDS), (0.6, 0.8, REVERSED)],
)
def test_paired_difference_matches_a_numpy_bootstrap(
    accuracy_a: float, accuracy_b: float, expected: str
) -> None:
    a, b, gold = _systems(600, accuracy_a, accuracy_b)
    resampler = Resampler(4000, seed=11)
    scores_a = resampled_scores([_record(a, gold)], resampler)["TREC.acc"]
    scores_b = resampled_scores([_record(b, gold)], resampler)["TREC.acc"]
    observed = point_scores(_record(a, gold))["TREC.acc"] - point_scores(_record(b, gold))["TREC.acc"]
    difference = Difference.of(observed, scores_a - scores_b)
    ours = _numpy_paired_bootstrap(a, b, gold, 4000)
    low, high = np.percentile(ours, [2.5, 97.5])
    assert observed == pytest.approx(100 * (np.mean(a == gold) - np.mean(b == gold)), abs=0.011)
    if expected == INCONCLUSIVE:  # identical systems: every resampled difference is 0
        assert (difference.low, difference.high, difference.p) == (0.0, 0.0, 1.0)
    else:  # two bootstraps of the same data: their ends agree to Monte Carlo error
        assert difference.low == pytest.approx(low, abs=0.4) and difference.high == pytest.approx(
            high, abs=0.4
        )
    assert judge([difference])[0] == [expected]


def test_pairing_narrows_the_interval_of_a_shared_difficulty_difference() -> None:
    a, b, gold = _systems(600, 0.75, 0.72)
    resampler = Resampler(2000)
    paired = (
        resampled_scores([_record(a, gold)], resampler)["TREC.acc"]
        - resampled_scores([_record(b, gold)], resampler)["TREC.acc"]
    )
    unpaired = (
        resampled_scores([_record(a, gold)], resampler)["TREC.acc"]
        - resampled_scores([_record(b, gold)], Resampler(2000, seed=99))["TREC.acc"]
    )
    assert np.ptp(interval(paired)) < 0.5 * np.ptp(interval(unpaired))


def test_p_value_is_twice_the_smaller_tail() -> None:
    assert p_value(np.array([-1.0, 1, 2, 3])) == 0.5
    assert p_value(np.array([1.0, 2, 3, 4])) == 0.0
    assert p_value(np.zeros(5)) == 1.0


@pytest.mark.parametrize("p", [[0.01, 0.04, 0.03, 0.005], [0.2, 0.01, 0.02], [0.049], [0.5, 0.5, 0.001]])
def test_holm_matches_statsmodels(p: list[float]) -> None:
    adjusted, rejected = holm(p)
    expected_reject, expected_adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert rejected == list(expected_reject)
    assert adjusted == pytest.approx(list(expected_adjusted))


def test_holm_hand_example() -> None:
    """m = 3, p = 0.01, 0.02, 0.04: 0.01 <= 0.05/3 rejected, 0.02 <= 0.05/2 rejected, 0.04 <= 0.05."""
    assert holm([0.04, 0.01, 0.02]) == ([0.04, 0.03, 0.04], [True, True, True])
    assert holm([0.03, 0.01, 0.02])[1] == [True, True, True]
    assert holm([0.02, 0.03, 0.03])[1] == [False, False, False]  # 0.02 > 0.05/3: none


def test_best_share_counts_the_resamples_where_the_claimed_cell_tops() -> None:
    cells = np.array([[1.0, 2, 3, 4], [2.0, 1, 3, 1]])
    assert best_share(cells, 0) == 0.75 and best_share(cells, 1) == 0.5
