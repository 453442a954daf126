"""Bootstrap resamples, drawn so that two systems scored on the same items get the same ones (paired).

Items (Efron & Tibshirani 1993, percentile bootstrap): B resamples of each stratum's n items, drawn with
replacement, kept as counts (harness.stats.weighted). A stratum's draws come from a generator seeded by
the bootstrap seed, the stratum's name and size, and the slot (below): every run scored on STS12's MSRpar
pairs gets the same B count vectors, whatever else the run evaluated, so a difference of two runs is
computed on the same resamples, and reports are reproducible.

Seeds, then items (two levels): a row with k >= 2 seeds (runs alike but for `seed`) is resampled by
drawing k of its seeds with replacement, then the items of each drawn seed: slot m of resample b takes
seed `draws[b, m]` and the items' resample b of slot m. The row's resampled score is the mean over its k
slots, as the row's score is the mean over its seeds. Rows with the same number of seeds (listed in the
same order: sorted by seed) share the draws, so a difference of two rows is paired by seed too. A row
with one seed is resampled over items only: its interval says nothing of seed noise, and the report says
so."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.choices import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.stats.item_scores import Scores, item_scores


@dataclass(frozen=True)
class Resampler:
    """B resamples (`resamples`) from a fixed bootstrap `seed`."""

    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED

    def _generator(self, *key: object) -> np.random.Generator:
        words = [zlib.crc32(str(part).encode()) for part in key]
        return np.random.default_rng(np.random.SeedSequence([self.seed, *words]))

    def counts(self, stratum: str, n: int, slot: int = 0) -> np.ndarray:
        """[B, n] counts: row b is how often each item is drawn in resample b (each row sums to n)."""
        return _counts(self, stratum, n, slot)

    def seed_draws(self, k: int) -> np.ndarray:
        """[B, k] positions of the seeds drawn (with replacement) in each resample, for rows of k seeds."""
        return self._generator("seeds", k).integers(0, k, size=(self.resamples, k))


@functools.lru_cache(maxsize=256)
def _counts(resampler: Resampler, stratum: str, n: int, slot: int) -> np.ndarray:
    """Drawn once per process: the report's rows share a stratum's resamples (cached; uint8 or uint16)."""
    generator = resampler._generator("items", stratum, n, slot)
    out = np.empty((resampler.resamples, n), dtype=np.uint16 if n > 255 else np.uint8)
    step = max(1, 2_000_000 // max(n, 1))
    for start in range(0, resampler.resamples, step):
        rows = min(step, resampler.resamples - start)
        drawn = generator.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        out[start : start + rows] = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n)
    out.setflags(write=False)
    return out


def resampled_scores(
    records: Sequence[pd.DataFrame], resampler: Resampler, metrics: Iterable[str] | None = None
) -> Scores:
    """A row's B resampled scores: `records` are its runs' item records, one per seed in seed order;
    one record: items only; k >= 2: seeds, then items (module docstring)."""
    metrics = None if metrics is None else list(metrics)
    if len(records) == 1:
        return item_scores(records[0], resampler.counts, metrics)
    k = len(records)
    draws = resampler.seed_draws(k)
    total: Scores = {}
    filled: dict[str, int] = {}
    for m in range(k):
        for j, record in enumerate(records):
            rows = np.flatnonzero(draws[:, m] == j)
            if not len(rows):
                continue

            def counts(name: str, n: int, slot: int = m, rows: np.ndarray = rows) -> np.ndarray:
                return resampler.counts(name, n, slot)[rows]

            for name, values in item_scores(record, counts, metrics).items():
                total.setdefault(name, np.zeros(resampler.resamples))[rows] += values / k
                filled[name] = filled.get(name, 0) + len(rows)
    # a score some seed's run lacks (it evaluated other tasks) has no two-level resamples
    return {name: values for name, values in total.items() if filled[name] == k * resampler.resamples}
