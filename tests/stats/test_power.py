"""The detectable difference of a comparison with K seeds: the normal-approximation formula."""

from __future__ import annotations

import math

import pytest

from harness.stats.power import detectable_difference


def test_detectable_difference_is_the_normal_approximation() -> None:
    # (1.959964 + 0.841621) * sqrt(0.25 + 4 / 4) = 2.801585 * 1.118034
    assert detectable_difference(0.25, 4.0, 4) == pytest.approx(2.801585 * math.sqrt(1.25), rel=1e-6)


def test_more_seeds_shrink_it_towards_the_items_floor() -> None:
    sizes = [detectable_difference(0.25, 4.0, k) for k in (1, 2, 4, 8, 1000)]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[-1] == pytest.approx(detectable_difference(0.25, None, 1), rel=0.01)


def test_power_at_an_effect_is_statsmodels_normal_power() -> None:
    """A z-test of one paired difference of standard deviation sqrt(var_K): statsmodels' NormalIndPower
    with ratio 0 (one sample) and effect size effect / sd."""
    from statsmodels.stats.power import NormalIndPower

    from harness.stats.power import power_at

    sd = math.sqrt(0.25 + 4.0 / 3)
    theirs = NormalIndPower().power(effect_size=2.0 / sd, nobs1=1, alpha=0.05, ratio=0)
    assert power_at(2.0, 0.25, 4.0, 3) == pytest.approx(theirs, rel=1e-9)
    assert power_at(-2.0, 0.25, 4.0, 3) == pytest.approx(theirs, rel=1e-9)


def test_the_seeds_a_claim_needs_reach_80_percent_power_and_no_fewer_do() -> None:
    from harness.stats.power import power_at, seeds_for

    k = seeds_for(3.0, 0.25, 9.0)
    assert k is not None and power_at(3.0, 0.25, 9.0, k) >= 0.8 > power_at(3.0, 0.25, 9.0, k - 1)
    assert seeds_for(3.0, 0.25, None) == 1  # seed noise unknown: the items alone suffice
    assert seeds_for(0.5, 0.25, 9.0) is None  # the items' floor (MDE 1.4) is wider than the effect
