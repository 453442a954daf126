"""How often the harness's 95% intervals cover the truth: simulated designs whose true score is known in
closed form, each replicate a fresh test set (and fresh seeds), scored and resampled by the harness's own
code (item records, `resampled_scores`, `interval`). bench/coverage.py runs every design at scale
(docs/statistics.md has its figures); tests/stats/test_coverage.py runs two of them fast.

The designs (scores x 100, as the harness logs them):
- `spearman`: n pairs, gold ~ N(2.5, 1.2^2), prediction = gold + sigma z; (gold, prediction) is bivariate
  normal with Pearson r = 1.2 / sqrt(1.2^2 + sigma^2), so the true Spearman is (6 / pi) arcsin(r / 2)
  (Pearson 1907; Kendall & Stuart).
- `wmean`: three subsets of different sizes and noise, SentEval's size-weighted mean of their Spearmans:
  the true value is the same weighted mean of the subsets' true Spearmans.
- `accuracy` (`senteval_test`) and `cv_accuracy` (`senteval_cv`, 10 outer folds): item i has difficulty
  d_i ~ N(0, 1), and a system of ability a gets it right when a - d_i + e > 0, e ~ N(0, 1): the true
  accuracy is Phi(a / sqrt(2)).
- Two levels (k seeds, seed noise): a seed shifts the ability by delta ~ N(0, tau^2) (accuracy; true
  value Phi(a / sqrt(2 + tau^2)), the mean over seeds and items) or scales the noise by exp(tau u),
  u ~ N(0, 1) (Spearman; the true value the mean over u of the Spearman above, by Gauss-Hermite
  quadrature). The items are shared by the seeds (crossed), as a real study's test set is. tau is set so
  the seed spread of the score is `seed_ratio` times its item standard error (3: the setting where 2-3
  seeds covered 78-84% before the few-seeds correction).
- `difference`: two systems' paired two-level accuracy difference (the same items, the same seed names).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from harness.stats.compare import interval
from harness.stats.items import concat_items, item_rows
from harness.stats.resample import Resampler, item_resamples, seed_difference, seed_resamples

GOLD_SD = 1.2
Draw = Callable[[np.random.Generator], tuple[list[list[pd.DataFrame]], float]]


def spearman_of_normal(sigma: float | np.ndarray) -> float | np.ndarray:
    """The Spearman x 100 of gold ~ N(., GOLD_SD^2) and gold + sigma z: (6 / pi) arcsin(r / 2)."""
    r = GOLD_SD / np.sqrt(GOLD_SD**2 + np.asarray(sigma) ** 2)
    return 100 * 6 / np.pi * np.arcsin(r / 2)


def _mean_over_seeds(sigma: float, tau: float) -> float:
    """E_u[spearman_of_normal(sigma exp(tau u))], u ~ N(0, 1), by 60-point Gauss-Hermite quadrature."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    return float(np.sum(weights * spearman_of_normal(sigma * np.exp(tau * nodes))) / np.sqrt(2 * np.pi))


def _sts(gold: np.ndarray, prediction: np.ndarray, task: str, subset: str | None = None) -> pd.DataFrame:
    return item_rows(task, "sts", prediction, gold, subset=subset)


def _records(right: np.ndarray, gold: np.ndarray, task: str, protocol: str,
             folds: np.ndarray | None = None) -> list[pd.DataFrame]:  # fmt: skip
    """One record per seed: binary `gold`, and the prediction equal to it where `right`."""
    return [item_rows(task, protocol, np.where(r, gold, 1 - gold), gold, fold=folds) for r in right]


def _accuracy_tau(ability: float, n: int, seed_ratio: float) -> float:
    """tau whose seed spread of the accuracy (x 100, to first order) is `seed_ratio` times the item SE."""
    accuracy = norm.cdf(ability / np.sqrt(2))
    item_se = 100 * np.sqrt(accuracy * (1 - accuracy) / n)
    slope = 100 * norm.pdf(ability / np.sqrt(2)) / np.sqrt(2)  # d accuracy / d delta
    return seed_ratio * item_se / slope


def _spearman_tau(sigma: float, n: int, seed_ratio: float) -> float:
    """tau whose seed spread of the Spearman (first order) is `seed_ratio` times its item SE (the
    large-sample SE of Spearman's rho, about (1 - rho^2) / sqrt(n) x 1.06, Fieller et al. 1957)."""
    rho = spearman_of_normal(sigma) / 100
    item_se = 100 * 1.06 * (1 - rho**2) / np.sqrt(n)
    step = 1e-4
    slope = (spearman_of_normal(sigma * np.exp(step)) - spearman_of_normal(sigma * np.exp(-step))) / (
        2 * step
    )
    return seed_ratio * item_se / abs(float(slope))


@dataclass(frozen=True)
class Design:
    """A simulated evaluation: `draw(rng)` gives each row's records (one per seed) and the true value of
    `metric` (of the first row, or of the first minus the second)."""

    name: str
    metric: str
    seeds: int
    draw: Draw


def spearman(n: int = 500, sigma: float = 1.0, seeds: int = 1, seed_ratio: float = 3.0) -> Design:
    tau = _spearman_tau(sigma, n, seed_ratio) if seeds > 1 else 0.0
    truth = _mean_over_seeds(sigma, tau) if seeds > 1 else float(spearman_of_normal(sigma))

    def draw(rng: np.random.Generator) -> tuple[list[list[pd.DataFrame]], float]:
        gold = rng.normal(2.5, GOLD_SD, n)
        scales = sigma * np.exp(tau * rng.normal(size=seeds))
        return [[_sts(gold, gold + s * rng.normal(size=n), "STSBenchmark") for s in scales]], truth

    return Design(f"spearman, {seeds} seed(s)", "STSBenchmark.spearman", seeds, draw)


def wmean(sizes: tuple[int, ...] = (300, 200, 120), sigmas: tuple[float, ...] = (0.8, 1.2, 1.6)) -> Design:
    truth = float(np.average(spearman_of_normal(np.array(sigmas)), weights=sizes))

    def draw(rng: np.random.Generator) -> tuple[list[list[pd.DataFrame]], float]:
        parts = []
        for i, (n, sigma) in enumerate(zip(sizes, sigmas, strict=True)):
            gold = rng.normal(2.5, GOLD_SD, n)
            parts.append(_sts(gold, gold + sigma * rng.normal(size=n), "STS12", f"STS12-s{i}"))
        return [[concat_items(parts)]], truth

    return Design("wmean of 3 subsets", "STS12.spearman_wmean", 1, draw)


def _right(
    ability: float, difficulty: np.ndarray, shifts: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """[seeds, n]: whether each seed gets each item right, ability + shift - d + e > 0."""
    noise = rng.normal(size=(len(shifts), len(difficulty)))
    return (ability + shifts[:, None] - difficulty[None, :] + noise) > 0


def accuracy(n: int = 800, ability: float = 0.7, seeds: int = 1, seed_ratio: float = 3.0,
             cross_validated: bool = False) -> Design:  # fmt: skip
    tau = _accuracy_tau(ability, n, seed_ratio) if seeds > 1 else 0.0
    truth = 100 * float(norm.cdf(ability / np.sqrt(2 + tau**2)))
    protocol, task = ("senteval_cv", "MR") if cross_validated else ("senteval_test", "TREC")
    folds = np.arange(n) % 10 if cross_validated else None

    def draw(rng: np.random.Generator) -> tuple[list[list[pd.DataFrame]], float]:
        difficulty, gold = rng.normal(size=n), rng.integers(0, 2, n).astype(float)
        right = _right(ability, difficulty, tau * rng.normal(size=seeds), rng)
        return [_records(right, gold, task, protocol, folds)], truth

    kind = "cross-validated accuracy" if cross_validated else "accuracy"
    ratio = f", seed ratio {seed_ratio:g}" if seeds > 1 else ""
    return Design(f"{kind}, {seeds} seed(s){ratio}", f"{task}.acc", seeds, draw)


def difference(n: int = 800, abilities: tuple[float, float] = (0.7, 0.55), seeds: int = 3,
               seed_ratio: float = 3.0) -> Design:  # fmt: skip
    tau = _accuracy_tau(abilities[0], n, seed_ratio)
    truth = 100 * float(np.diff(norm.cdf(np.array(abilities[::-1]) / np.sqrt(2 + tau**2)))[0])

    def draw(rng: np.random.Generator) -> tuple[list[list[pd.DataFrame]], float]:
        difficulty, gold = rng.normal(size=n), rng.integers(0, 2, n).astype(float)
        rights = [_right(a, difficulty, tau * rng.normal(size=seeds), rng) for a in abilities]
        return [_records(right, gold, "TREC", "senteval_test") for right in rights], truth

    return Design(f"paired accuracy difference, {seeds} seeds", "TREC.acc", seeds, draw)


@dataclass(frozen=True)
class Coverage:
    """A design's share of replicates whose interval held the truth, its Monte Carlo standard error, and
    the intervals' mean width."""

    design: str
    replicates: int
    covered: float
    se: float
    width: float


def coverage(design: Design, replicates: int, resamples: int = 1000, seed: int = 0,
             few_seeds_correction: bool = True) -> Coverage:  # fmt: skip
    """Run `replicates` fresh draws of `design` through the harness's resampling; each replicate draws its
    own bootstrap (Resampler seed = its index)."""
    rng = np.random.default_rng(seed)
    hits, widths = 0, []
    for r in range(replicates):
        rows, truth = design.draw(rng)
        resampler = Resampler(resamples, seed=r)
        names = list(range(1, design.seeds + 1))
        per_seed = [[item_resamples(run, resampler, [design.metric]) for run in runs] for runs in rows]
        if len(rows) == 2:  # a paired difference of two rows of the same seeds
            scores = seed_difference(
                per_seed[0], per_seed[1], resampler, (names, names), few_seeds_correction
            )
        else:
            scores = seed_resamples(per_seed[0], resampler, names, few_seeds_correction)
        low, high = interval(scores[design.metric])
        hits += bool(low <= truth <= high)
        widths.append(high - low)
    share = hits / replicates
    return Coverage(design.name, replicates, share, float(np.sqrt(share * (1 - share) / replicates)),
                    float(np.mean(widths)))  # fmt: skip


def exact_coverage(seeds: int, ratio: float, points: int = 20_000) -> float:
    """The few-seeds rule's coverage without a bootstrap (harness.stats.few_seeds): the error is
    N(0, A) + N(0, B), B estimated as B chi^2_{k-1} / (k - 1), A known; with B = 1 and A = `ratio`, the
    coverage is E[2 Phi(h(A, B_hat) / sqrt(A + B)) - 1], the mean over `points` quantiles of the
    chi-square law (midpoint rule)."""
    from scipy.stats import chi2

    from harness.stats.few_seeds import half_width

    quantiles = (np.arange(points) + 0.5) / points
    half = half_width(ratio, chi2.ppf(quantiles, seeds - 1) / (seeds - 1), seeds - 1)
    return float(np.mean(2 * norm.cdf(half / np.sqrt(ratio + 1)) - 1))
