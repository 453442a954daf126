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
