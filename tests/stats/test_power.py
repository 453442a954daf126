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
