"""The few-seeds correction: how far a two-level resample's seed part is stretched so that a 95% interval
of a row (or of a difference of two rows) with k = 2-10 seeds covers 95%.

Resample b of a row of k seeds is I_b + S_b: its item part I_b (the mean over the k seeds of their item
resample b) and its seed part S_b (the drawn seeds' mean minus I_b; harness.stats.resample). The plain
two-level bootstrap misjudges few seeds twice: it reads the seeds' spread, estimated from k values, at
normal quantiles (2-3 seeds covered 78-84%), and it counts a seed's own item-level noise (another seed
predicts some items differently) twice, once in I_b and once in S_b (Owen 2007, "The pigeonhole
bootstrap", shows it overcounts this interaction). So S_b is rescaled, I_b + c S_b, c found by bisection
on the percentile interval's width (the bootstrap's own shape is kept), to the width of the crossed seeds x
items design's interval, its components estimated by the method of moments from the same resamples
(Brennan 2001, *Generalizability Theory*, ch. 3: seeds x items, one observation a cell), for a [k, B]
matrix S of per-seed item resamples:

    V_items = var_b(I_b)                                   item effect / n + noise / (k n)
    noise   = max(0, mean_j var_b(S_j) - V_items) k/(k-1)  a seed's item-level noise / n
    A       = max(0, V_items - noise / k)                  the items' part, many degrees of freedom
    B       = var_j(mean_b S_j) / k   (ddof 1)             the seeds' part, noise / k included: k - 1 df

B is (seed effect + noise) / k times chi^2_{k-1} / (k - 1) exactly, A is nearly fixed, and the row's error
is N(0, A) + N(0, B): Student's t is exact when A = 0, the normal when B = 0. Between them the interval is

    half-width = t_{0.975, d (1 + A / B)} sqrt(A + B),   d = k - 1 degrees of freedom of B,

Satterthwaite's (1946) effective degrees of freedom, d (1 + A/B)^2 for a known A, taken to the first power:
read with the estimated B, Satterthwaite's own exponent undercovers (a B low by chance raises the degrees
of freedom just when the interval is already short: 92.2% at k = 3), and reading all of B at t_{k-1}
(half-width sqrt(z^2 A + t_{k-1}^2 B)) overcovers (97.6%). The exact coverage of this rule, integrated over
B's chi-square law at every ratio A/B (bench/coverage.py --exact), is 94.2-96.3% at k = 3, 94.9-96.2% at
k = 4 and 95.0-96.0% at k = 5. With d < 2 (two seeds) it falls to 90.8%, so there the seeds' whole part is
read at Student's t with d degrees of freedom: sqrt(z^2 A + t_d^2 B), 95.0-98.7%.

A difference of two rows (or any contrast sum_i s_i row_i, s_i = +-1: a gain is (a - b) - (c - d)) is
corrected as one: rows of the same seeds (the same names, so the same seed draws) are paired, and the rule
above runs on the matrix of per-seed contrasts sum_i s_i S_i (the items' part of a paired difference
cancels, and with it the reason to read the seeds at fewer degrees of freedom than a lone row needs); rows
of other seeds are unpaired: A = var_b(sum_i s_i I_i) - sum_i noise_i / k_i, B = sum_i B_i and d Welch's
(1947) B^2 / sum_i (B_i^2 / (k_i - 1)), one c for every seed part."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z = 1.959963984540054  # the normal's 0.975 quantile


@dataclass(frozen=True)
class Components:
    """A row's (or a difference's) variance components: `items` A and `seeds` B with `df` d."""

    items: float
    seeds: float
    df: float

    def half_width(self) -> float:
        """The 95% interval's half-width (module docstring)."""
        return float(half_width(self.items, self.seeds, self.df))


def half_width(items: float, seeds: float | np.ndarray, df: float) -> float | np.ndarray:
    """t_{0.975, d (1 + A / B)} sqrt(A + B), or sqrt(z^2 A + t_{0.975, d}^2 B) where d < 2 (module
    docstring); elementwise over an array of B."""
    from scipy.stats import t

    if df < 2:
        return np.sqrt(Z**2 * items + t.ppf(0.975, df) ** 2 * seeds)
    return t.ppf(0.975, df * (1 + items / seeds)) * np.sqrt(items + seeds)


def noise(scores: np.ndarray) -> float:
    """A seed's item-level noise / n from a [k, B] matrix of per-seed item resamples (0 for one seed)."""
    k = scores.shape[0]
    if k < 2:
        return 0.0
    items = float(np.var(scores.mean(axis=0)))
    return max(0.0, float(np.mean(np.var(scores, axis=1))) - items) * k / (k - 1)


def seed_variance(scores: np.ndarray) -> float:
    """B: the variance of the mean over k seeds, var_j(mean_b S_j) / k (0 for one seed)."""
    k = scores.shape[0]
    return float(np.var(scores.mean(axis=1), ddof=1)) / k if k >= 2 else 0.0


def components(scores: np.ndarray) -> Components:
    """A row's components from its [k, B] per-seed item resamples (or a paired difference's)."""
    k = scores.shape[0]
    items = max(0.0, float(np.var(scores.mean(axis=0))) - noise(scores) / k)
    return Components(items, seed_variance(scores), k - 1)


def unpaired_components(rows: Sequence[np.ndarray], signs: Sequence[float]) -> Components:
    """A contrast sum_i signs[i] * row_i of rows of other seeds (each a [k_i, B] matrix of per-seed item
    resamples): A of the items' part of the contrast, B the sum of the rows' seed parts and Welch's d."""
    items = float(np.var(sum(sign * row.mean(axis=0) for row, sign in zip(rows, signs, strict=True))))
    items -= sum(noise(row) / row.shape[0] for row in rows)
    seeds = [seed_variance(row) for row in rows]
    parts = [
        b**2 / (row.shape[0] - 1) for b, row in zip(seeds, rows, strict=True) if row.shape[0] >= 2 and b > 0
    ]
    total = sum(seeds)
    return Components(max(0.0, items), total, total**2 / sum(parts) if parts else 0.0)


def factor(item_part: np.ndarray, seed_part: np.ndarray, wanted: Components) -> float:
    """c such that the percentile interval of item_part + c seed_part is 2 `wanted.half_width()` wide; 0
    where the seeds add nothing (no seed part, or B = 0) or the items alone are that wide already."""
    if not np.any(seed_part) or wanted.seeds <= 0:
        return 0.0
    target = 2 * wanted.half_width()

    def width(c: float) -> float:
        low, high = np.percentile(item_part + c * seed_part, [2.5, 97.5])
        return float(high - low)

    if width(0.0) >= target:
        return 0.0
    low, high = 0.0, 1.0
    while width(high) < target:
        low, high = high, 2 * high
    for _ in range(30):  # bisection: the width grows with c
        middle = (low + high) / 2
        low, high = (middle, high) if width(middle) < target else (low, middle)
    return high
