"""Intervals, paired differences, p-values and Holm's correction over resampled scores
(harness.stats.resample), and the verdict on a directional claim.

- Interval: the percentile interval (Efron & Tibshirani 1993, ch. 13) of the B resampled scores, the
  2.5th and 97.5th percentiles for 95% (numpy's linear interpolation between order statistics).
- Paired difference of rows a and b scored on the same items: d_b = a_b - b_b over the same resamples
  (shared item difficulty cancels); its percentile interval.
- Bootstrap p-value of "d != 0": 2 * min(share of d_b <= 0, share of d_b >= 0), at most 1 (the
  percentile interval at level 1 - alpha excludes 0 exactly when p < alpha, up to ties).
- Holm (1979): a family's m p-values sorted ascending, the i-th (from 1) rejected while
  p_(i) <= alpha / (m - i + 1), none after the first that is not; adjusted p_(i) = max over j <= i of
  min(1, (m - j + 1) p_(j)).
- Verdict of "a beats b" (Dror et al. 2018 recommend the bootstrap for such metrics, which are not means
  of items): `holds` when its Holm-adjusted p <= alpha and the difference is in the claimed direction,
  `reversed` when adjusted p <= alpha and it is the other way, `inconclusive` otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
HOLDS, REVERSED, INCONCLUSIVE = "holds", "reversed", "inconclusive"


def interval(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of resampled values (NaN where a resample's score is undefined, e.g. a
    correlation of constant predictions)."""
    if not np.all(np.isfinite(values)):
        return float("nan"), float("nan")
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def p_value(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a difference being 0; NaN where some resample is undefined."""
    if not np.all(np.isfinite(differences)):
        return float("nan")
    below, above = float(np.mean(differences <= 0)), float(np.mean(differences >= 0))
    return min(1.0, 2 * min(below, above))


def holm(p_values: list[float], alpha: float = ALPHA) -> tuple[list[float], list[bool]]:
    """(Holm-adjusted p-values, rejected?) in the given order; an undefined (NaN) p counts as 1."""
    p_values = [1.0 if np.isnan(p) else p for p in p_values]
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, rejected = [1.0] * m, [False] * m
    running, still = 0.0, True
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
        still = still and p_values[i] <= alpha / (m - rank)
        rejected[i] = still
    return adjusted, rejected


@dataclass(frozen=True)
class Difference:
    """A paired difference a - b: the observed value, its interval, its two-sided p-value and the side of
    0 most resamples fall on (+1, -1; 0 for a tie or an undefined score)."""

    observed: float
    low: float
    high: float
    p: float
    side: int = 0

    @classmethod
    def of(cls, observed: float, resampled: np.ndarray, level: float = 0.95) -> Difference:
        low, high = interval(resampled, level)
        side = int(np.sign(np.mean(resampled > 0) - np.mean(resampled < 0))) if np.isfinite(low) else 0
        return cls(float(observed), low, high, p_value(resampled), side)

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def verdict(difference: Difference, rejected: bool) -> str:
    """A claimed positive difference's verdict: rejected by Holm, with the resamples and the observed
    difference on the same side of 0 (the rejected side is the resamples'; an observed value on the other
    side, or an undefined one, is no evidence either way)."""
    if not rejected or not np.isfinite(difference.observed) or difference.side == 0:
        return INCONCLUSIVE
    if difference.side > 0 and difference.observed > 0:
        return HOLDS
    if difference.side < 0 and difference.observed < 0:
        return REVERSED
    return INCONCLUSIVE


def judge(differences: list[Difference], alpha: float = ALPHA) -> tuple[list[str], list[float]]:
    """(verdicts, Holm-adjusted p-values) of a family of claimed positive differences (a claim's
    difference is better - worse, so a positive one is in the claimed direction)."""
    adjusted, rejected = holm([d.p for d in differences], alpha)
    return [verdict(d, r) for d, r in zip(differences, rejected, strict=True)], adjusted


def best_share(resampled: np.ndarray, claimed: int) -> float:
    """The share of resamples in which cell `claimed` scores highest ([cells, B] resampled scores; a
    tie for the top counts for every cell in it)."""
    top = resampled.max(axis=0)
    return float(np.mean(resampled[claimed] >= top))
