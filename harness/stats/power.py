"""How many seeds: the smallest difference a claim's comparison could detect at 80% power with K seeds
per row (docs/statistics.md).

A row's score with K seeds on a fixed test set is the mean of K seed scores; two rows' paired difference
then varies by (a) the test items (the paired item bootstrap's variance of one seed's difference, which
more seeds do not shrink: every seed is scored on the same items) and (b) the seeds (the sample variance
over the finished seeds of the per-seed difference a_s - b_s, divided by K):

    var_K = V_items + s_d^2 / K
    MDE_K = (z_{1 - alpha / 2} + z_{power}) * sqrt(var_K)

the normal-approximation minimum detectable effect of a two-sided test at level alpha (Cohen 1988, ch. 2;
Dror et al. 2018 on power in NLP comparisons). With one finished seed s_d is unknown: only the items' part
is given, a lower bound."""

from __future__ import annotations

import math

from scipy.stats import norm


def detectable_difference(
    item_variance: float, seed_variance: float | None, seeds: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """MDE_K; `seed_variance` None (one finished seed): the items' part alone."""
    variance = item_variance + (0.0 if seed_variance is None else seed_variance / seeds)
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * math.sqrt(variance))
