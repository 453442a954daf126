"""Saved item resamples: read back as written under the same bootstrap, refused under another."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.stats.items import item_rows
from harness.stats.resample import Resampler, item_resamples, read_resamples, write_resamples


def test_saved_resamples_round_trip_under_their_bootstrap_only(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    gold = np.round(rng.uniform(0, 5, 300), 1)
    record = item_rows("STSBenchmark", "sts", gold + rng.normal(size=300), gold)
    resampler = Resampler(500, seed=3)
    scores = item_resamples(record, resampler)
    path = write_resamples(scores, resampler, tmp_path / "resamples.npz")
    back = read_resamples(path, resampler)
    assert back is not None and set(back) == set(scores)
    for name, values in scores.items():
        assert back[name] == pytest.approx(values, rel=1e-6)  # float32 on disk
    assert read_resamples(path, Resampler(500, seed=4)) is None
    assert read_resamples(path, Resampler(400, seed=3)) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["resamples.npz"]  # no temporary file left


def test_few_seeds_widen_the_interval_to_the_crossed_designs_width() -> None:
    """Three seeds whose item resamples share an item part (variance 1) and each have their own item noise
    (variance 4), the seeds' scores far apart: the corrected interval is 2 t_{d (1 + A/B)} sqrt(A + B)
    wide, A = V_items - noise / 3 (the items' part without the noise the seed draws count again), B the
    seeds' variance of their mean, d = 2 (Brennan's seeds x items components and Satterthwaite's degrees
    of freedom taken to the first power, harness.stats.few_seeds; worked out here with numpy alone)."""
    from scipy.stats import t

    from harness.stats.compare import interval
    from harness.stats.resample import seed_resamples

    rng = np.random.default_rng(5)
    b = 4000
    shared = rng.normal(0, 1, b)
    per_seed = [{"m": 70 + offset + shared + rng.normal(0, 2, b)} for offset in (-1.5, 0.75, 1.2)]
    resampler = Resampler(b, seed=2)
    low, high = interval(seed_resamples(per_seed, resampler)["m"])
    scores = np.stack([s["m"] for s in per_seed])
    items = np.var(scores.mean(axis=0))
    noise = (np.mean(np.var(scores, axis=1)) - items) * 3 / 2
    seeds = np.var(scores.mean(axis=1), ddof=1) / 3
    a = items - noise / 3
    wanted = 2 * t.ppf(0.975, 2 * (1 + a / seeds)) * np.sqrt(a + seeds)
    assert high - low == pytest.approx(wanted, rel=0.02)
    counted_twice = 2 * t.ppf(0.975, 2 * (1 + items / seeds)) * np.sqrt(items + seeds)
    assert abs((high - low) - counted_twice) > 0.03 * counted_twice  # the subtraction matters here
    student = 2 * t.ppf(0.975, 2) * np.sqrt(a + seeds)  # all of it read at t_2: wider
    assert high - low < 0.9 * student
