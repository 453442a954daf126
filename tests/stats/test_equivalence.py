"""Size against the paper and equivalence (harness.stats.equivalence): where the paper's value stands to
the interval, the bootstrap TOST against statsmodels' z-based TOST of a mean, and the stated margins."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.weightstats import ztost

from harness.stats.equivalence import ABOVE_PAPER, AS_PAPER, BELOW_PAPER, Equivalence, Margins, size


def test_size_says_where_the_papers_value_stands_to_the_interval() -> None:
    assert size(8.44, 0.03, 0.11) == BELOW_PAPER  # the harness finds far less than the paper's +8.44
    assert size(0.05, 0.03, 0.11) == AS_PAPER
    assert size(-1.0, 0.03, 0.11) == ABOVE_PAPER


@pytest.mark.parametrize(("mean", "margin"), [(0.3, 0.4), (0.1, 0.4), (0.35, 0.4), (-0.2, 0.25)])
def test_the_bootstrap_tost_of_a_mean_agrees_with_statsmodels_ztost(mean: float, margin: float) -> None:
    """For a mean of n = 400 normal items the bootstrap distribution is the normal one ztost assumes:
    the two p-values agree to 0.02 and say the same at 0.05 where neither is near it."""
    rng = np.random.default_rng(7)
    x = rng.normal(mean, 1.0, 400)
    means = x[rng.integers(0, len(x), (20000, len(x)))].mean(axis=1)
    ours = Equivalence.of(means, 0.0, margin)
    theirs = float(ztost(x, -margin, margin)[0])
    assert ours.p == pytest.approx(theirs, abs=0.02)
    if abs(theirs - 0.05) > 0.02:
        assert ours.equivalent == (theirs <= 0.05)


def test_tost_is_a_two_sided_question_within_the_margin() -> None:
    rng = np.random.default_rng(0)
    near = 70.5 + rng.normal(0, 0.1, 2000)
    assert Equivalence.of(near, 70.05, 2.0).equivalent  # 0.45 off, well within +-2
    far = 72.0 + rng.normal(0, 0.3, 2000)
    tost = Equivalence.of(far, 70.05, 2.0)  # 1.95 off: about half the resamples beyond +2
    assert not tost.equivalent and 0.3 < tost.p < 0.7
    low = 68.0 + rng.normal(0, 0.1, 2000)
    assert not Equivalence.of(low, 70.05, 2.0).equivalent  # 2.05 below: beyond -2
    assert not Equivalence.of(np.array([np.nan, 1.0]), 1.0, 2.0).equivalent
    with pytest.raises(ValueError, match="positive"):
        Equivalence.of(near, 70.05, 0.0)


def test_margins_are_stated_per_metric_with_a_default() -> None:
    margins = Margins(1.5, (("transfer.avg", 1.0),))
    assert margins.of("transfer.avg") == 1.0 and margins.of("STS12-16.wmean") == 1.5
    assert margins.stated() == "+-1.5 points (+-0.015 on the CS224N fractions) (transfer.avg +-1)"
    assert Margins().of("anything") == 2.0
    assert Margins().of("dev.overall_r01") == 0.02 and Margins().of("dev.sts.pearson") == 0.02  # fractions
    assert Margins().of("dev.CoLA.mcc") == 2.0  # GLUE: x 100
