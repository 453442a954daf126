"""The few-seeds correction (harness.stats.few_seeds): its half-width's two regimes, its exact coverage,
and a difference of two rows corrected as one (paired by seed names, else Welch's degrees of freedom)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm, t

from harness.stats.compare import interval
from harness.stats.coverage import exact_coverage
from harness.stats.few_seeds import Components, unpaired_components
from harness.stats.resample import Resampler, seed_difference, seed_resamples


def test_the_half_width_is_students_for_seeds_alone_and_the_normals_for_items_alone() -> None:
    assert Components(0.0, 4.0, 2).half_width() == pytest.approx(t.ppf(0.975, 2) * 2)
    assert Components(9.0, 1e-12, 2).half_width() == pytest.approx(norm.ppf(0.975) * 3, rel=1e-5)
    between = Components(1.0, 1.0, 2).half_width()
    assert between == pytest.approx(t.ppf(0.975, 4) * np.sqrt(2))  # d (1 + A/B) = 4 degrees of freedom
    assert Components(1.0, 1.0, 1).half_width() == pytest.approx(
        np.sqrt(norm.ppf(0.975) ** 2 + t.ppf(0.975, 1) ** 2)
    )


@pytest.mark.parametrize("seeds", [3, 4, 5, 10])
def test_the_rule_covers_94_to_96_and_a_half_percent_at_every_ratio_of_items_to_seeds(seeds: int) -> None:
    covered = [exact_coverage(seeds, ratio) for ratio in (0.0, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)]
    assert covered[0] == pytest.approx(0.95, abs=1e-3)  # seeds alone: Student's t, exactly
    assert min(covered) >= 0.94 and max(covered) <= 0.965


def test_two_seeds_read_the_seeds_at_one_degree_of_freedom_never_below_95_percent() -> None:
    covered = [exact_coverage(2, ratio) for ratio in (0.0, 0.1, 1.0, 10.0, 100.0)]
    assert min(covered) >= 0.949


def test_satterthwaites_own_exponent_would_undercover_three_seeds() -> None:
    """Why the exponent is 1: with d (1 + A/B)^2 read at the estimated B, three seeds cover 92-93%."""
    from scipy.stats import chi2

    points = (np.arange(20_000) + 0.5) / 20_000
    b = chi2.ppf(points, 2) / 2
    half = t.ppf(0.975, 2 * (1 + 0.3 / b) ** 2) * np.sqrt(0.3 + b)
    assert np.mean(2 * norm.cdf(half / np.sqrt(1.3)) - 1) < 0.935 < exact_coverage(3, 0.3)


def _rows(rng: np.random.Generator, b: int, offsets: list[float], shared: np.ndarray) -> list[dict]:
    return [{"m": 70 + o + shared + rng.normal(0, 1, b)} for o in offsets]


def test_rows_of_the_same_seeds_are_corrected_on_their_per_seed_differences() -> None:
    rng = np.random.default_rng(1)
    resampler, shared = Resampler(2000, seed=3), rng.normal(0, 2, 2000)
    a, b = _rows(rng, 2000, [2.0, -1.0, 0.5], shared), _rows(rng, 2000, [1.0, 0.0, -2.0], shared)
    names = (["s1", "s2", "s3"], ["s1", "s2", "s3"])
    difference = seed_difference(a, b, resampler, names)["m"]
    per_seed = [{"m": a[j]["m"] - b[j]["m"]} for j in range(3)]
    assert np.array_equal(difference, seed_resamples(per_seed, resampler, names[0])["m"])
    separate = seed_resamples(a, resampler, names[0])["m"] - seed_resamples(b, resampler, names[1])["m"]
    assert not np.allclose(difference, separate)  # each row's own correction is not the difference's


def test_rows_of_other_seeds_get_one_factor_at_welchs_degrees_of_freedom() -> None:
    rng = np.random.default_rng(2)
    resampler, shared = Resampler(2000, seed=3), rng.normal(0, 1, 2000)
    a = _rows(rng, 2000, [3.0, -2.0, 0.5], shared)
    b = _rows(rng, 2000, [1.0, 0.0, -2.0, 2.5, -0.5], shared)
    scores_a, scores_b = (np.stack([s["m"] for s in row]) for row in (a, b))
    parts = unpaired_components([scores_a, scores_b], [1.0, -1.0])
    seeds_a, seeds_b = (np.var(s.mean(axis=1), ddof=1) / len(s) for s in (scores_a, scores_b))
    assert parts.seeds == pytest.approx(seeds_a + seeds_b)
    assert parts.df == pytest.approx((seeds_a + seeds_b) ** 2 / (seeds_a**2 / 2 + seeds_b**2 / 4))
    difference = seed_difference(a, b, resampler, (["x", "y", "z"], list("abcde")))["m"]
    low, high = interval(difference)
    assert high - low == pytest.approx(2 * parts.half_width(), rel=0.03)
    plain = [seed_resamples(row, resampler, names, few_seeds_correction=False)["m"]
             for row, names in ((a, ["x", "y", "z"]), (b, list("abcde")))]  # fmt: skip
    assert np.corrcoef(difference, plain[0])[0, 1] > 0.3 and np.corrcoef(difference, plain[1])[0, 1] < -0.3


def test_a_one_seed_row_against_a_row_of_seeds_keeps_the_seeds_degrees_of_freedom() -> None:
    rng = np.random.default_rng(4)
    resampler, shared = Resampler(2000, seed=3), rng.normal(0, 1, 2000)
    a, b = _rows(rng, 2000, [3.0, -2.0, 0.5], shared), _rows(rng, 2000, [0.0], shared)
    parts = unpaired_components([np.stack([s["m"] for s in row]) for row in (a, b)], [1.0, -1.0])
    assert parts.df == pytest.approx(2.0)
    assert "m" in seed_difference(a, b, resampler, (None, None))


def test_a_gain_of_four_rows_of_the_same_seeds_is_corrected_on_its_per_seed_contrast() -> None:
    """(a - b) - (c - d), all of the same seeds: the rule runs on the per-seed contrasts, not on two
    differences each stretched by its own factor."""
    from harness.stats.resample import seed_contrast

    rng = np.random.default_rng(6)
    resampler, shared = Resampler(2000, seed=3), rng.normal(0, 2, 2000)
    rows = [_rows(rng, 2000, list(rng.normal(0, 1.5, 3)), shared) for _ in range(4)]
    names = ["s1", "s2", "s3"]
    gain = seed_contrast(rows, [1.0, -1.0, -1.0, 1.0], resampler, [names] * 4)["m"]
    per_seed = [
        {"m": rows[0][j]["m"] - rows[1][j]["m"] - rows[2][j]["m"] + rows[3][j]["m"]} for j in range(3)
    ]
    assert np.array_equal(gain, seed_resamples(per_seed, resampler, names)["m"])
    differences = [seed_difference(rows[i], rows[i + 1], resampler, (names, names))["m"] for i in (0, 2)]
    assert not np.allclose(gain, differences[0] - differences[1])
