"""Weighted scores over count vectors equal the scores of the repeated items (scipy, scikit-learn)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import f1_score, matthews_corrcoef

from harness.stats import weighted
from harness.stats.resample import Resampler


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return np.round(x, 2), np.round(x + rng.normal(size=n), 1)  # ties on both sides


@pytest.mark.parametrize("n", [7, 300])
def test_spearman_and_pearson_equal_scipy_on_the_repeated_items(n: int) -> None:
    x, y = _data(n)
    counts = Resampler(40, seed=3).counts("t/s", n)
    rho, r = weighted.spearman(counts, x, y), weighted.pearson(counts, x, y)
    for b in range(len(counts)):
        drawn = np.repeat(np.arange(n), counts[b])
        assert rho[b] == pytest.approx(spearmanr(x[drawn], y[drawn]).statistic, abs=1e-12)
        assert r[b] == pytest.approx(pearsonr(x[drawn], y[drawn]).statistic, abs=1e-12)


def test_spearman_blocks_agree_with_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = _data(50)
    counts = Resampler(30).counts("s", 50)
    whole = weighted.spearman(counts, x, y)
    monkeypatch.setattr(weighted, "BLOCK", 7)
    assert np.array_equal(weighted.spearman(counts, x, y), whole)


def test_accuracy_f1_mcc_equal_scikit_learn_on_the_repeated_items() -> None:
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 200)
    predicted = np.where(rng.random(200) < 0.8, gold, 1 - gold)
    counts = Resampler(25).counts("c", 200)
    accuracy = weighted.accuracy(counts, predicted == gold)
    f1, mcc = weighted.f1(counts, predicted, gold), weighted.mcc(counts, predicted, gold)
    for b in range(len(counts)):
        drawn = np.repeat(np.arange(200), counts[b])
        assert accuracy[b] == pytest.approx(np.mean(predicted[drawn] == gold[drawn]), abs=1e-15)
        assert f1[b] == pytest.approx(f1_score(gold[drawn], predicted[drawn]), abs=1e-12)
        assert mcc[b] == pytest.approx(matthews_corrcoef(gold[drawn], predicted[drawn]), abs=1e-12)


def test_counts_are_resamples_with_replacement_and_reproducible() -> None:
    resampler = Resampler(500, seed=9)
    counts = resampler.counts("STS12/MSRpar", 120)
    assert counts.shape == (500, 120) and (counts.sum(axis=1) == 120).all()
    # each item is drawn Binomial(n, 1/n) times: mean 1, variance (1 - 1/n)
    assert counts.mean() == pytest.approx(1.0)
    per_item = counts.mean(axis=0)  # every item, the first and last included, drawn about once a resample
    assert per_item.min() > 0.8 and per_item.max() < 1.2
    assert counts.astype(float).var() == pytest.approx(1 - 1 / 120, rel=0.05)
    assert np.array_equal(Resampler(500, seed=9).counts("STS12/MSRpar", 120), counts)
    assert not np.array_equal(resampler.counts("STS12/OnWN", 120), counts)  # strata drawn apart
    assert not np.array_equal(Resampler(500, seed=10).counts("STS12/MSRpar", 120), counts)
