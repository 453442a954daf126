"""The intervals' coverage on simulated designs of known truth (harness.stats.coverage), fast: a few
hundred replicates cannot see a 2-point shortfall (bench/coverage.py runs 1,000 per design for that,
docs/statistics.md), but they do see the truths' formulas, an interval that ignores the seeds, and the
few-seeds correction at work. Every replicate is seeded, so each figure here is fixed."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats import coverage as c


def test_the_true_values_are_the_designs_own() -> None:
    """The closed forms against a large sample: Spearman of a bivariate normal, accuracy Phi(a / sqrt 2)."""
    from scipy.stats import norm, spearmanr

    rng = np.random.default_rng(3)
    gold = rng.normal(2.5, c.GOLD_SD, 400_000)
    assert spearmanr(gold, gold + rng.normal(size=gold.size)).statistic * 100 == pytest.approx(
        c.spearman_of_normal(1.0), abs=0.2
    )
    right = 0.7 - rng.normal(size=400_000) + rng.normal(size=400_000) > 0
    assert right.mean() == pytest.approx(norm.cdf(0.7 / np.sqrt(2)), abs=0.003)
    design = c.accuracy(seeds=3)
    _, truth = design.draw(rng)
    assert truth < 100 * norm.cdf(0.7 / np.sqrt(2))  # seed noise pulls the mean over seeds towards 50


@pytest.mark.slow
@pytest.mark.parametrize("design", [c.accuracy(), c.spearman()], ids=lambda d: d.name)
def test_items_only_intervals_cover_about_95_percent(design: c.Design) -> None:
    result = c.coverage(design, 300, resamples=500)
    assert 0.92 <= result.covered <= 0.98


@pytest.mark.slow
def test_the_few_seeds_correction_restores_what_three_seeds_lose() -> None:
    """Three seeds whose spread is three times the item noise: the plain two-level bootstrap covers far
    less than 95%; corrected, near it."""
    design = c.accuracy(seeds=3)
    plain = c.coverage(design, 300, resamples=500, few_seeds_correction=False)
    corrected = c.coverage(design, 300, resamples=500)
    assert plain.covered < 0.88 and corrected.covered >= 0.91 and corrected.width > 1.5 * plain.width
