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


def _variance(item_variance: float, seed_variance: float | None, seeds: int) -> float:
    """var_K = V_items + s_d^2 / K (the items' part alone where s_d is unknown)."""
    return item_variance + (0.0 if seed_variance is None else seed_variance / seeds)


def detectable_difference(
    item_variance: float, seed_variance: float | None, seeds: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """MDE_K; `seed_variance` None (one finished seed): the items' part alone."""
    variance = _variance(item_variance, seed_variance, seeds)
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(power)) * math.sqrt(variance))


def power_at(effect: float, item_variance: float, seed_variance: float | None, seeds: int,
             alpha: float = 0.05) -> float:  # fmt: skip
    """The power of the two-sided test at `alpha` to detect a true difference `effect` with K seeds:
    Phi(|effect| / sqrt(var_K) - z_{1 - alpha / 2}) + Phi(-|effect| / sqrt(var_K) - z_{1 - alpha / 2})
    (both tails; the same normal approximation as MDE_K)."""
    variance = _variance(item_variance, seed_variance, seeds)
    if variance <= 0:
        return 1.0 if effect else alpha
    z, shift = norm.ppf(1 - alpha / 2), abs(effect) / math.sqrt(variance)
    return float(norm.cdf(shift - z) + norm.cdf(-shift - z))


def seeds_for(effect: float, item_variance: float, seed_variance: float | None, power: float = 0.8,
              alpha: float = 0.05, most: int = 1000) -> int | None:  # fmt: skip
    """The smallest K whose power at `effect` reaches `power`: K >= s_d^2 / ((|effect| / (z_a + z_p))^2 -
    V_items), rounded up (at least 1); None when no number of seeds can (the items' floor alone is too
    wide for `effect`: a larger test set, not more seeds) or `most` would not."""
    needed = (abs(effect) / (norm.ppf(1 - alpha / 2) + norm.ppf(power))) ** 2 - item_variance
    if needed <= 0:
        return None
    if not seed_variance:
        return 1
    k = max(1, math.ceil(seed_variance / needed))
    return k if k <= most else None
