"""Bootstrap resamples, drawn so that two systems scored on the same items get the same ones (paired).

Items (Efron & Tibshirani 1993, percentile bootstrap): B resamples of each stratum's n items, drawn with
replacement, kept as counts (harness.stats.weighted). A stratum's draws come from a generator seeded by
the bootstrap seed and the stratum's name and size: every run scored on STS12's MSRpar pairs gets the
same B count vectors, whatever else the run evaluated, so a difference of two runs is computed on the
same resamples, and reports are reproducible.

Seeds, then items (two levels): a row with k >= 2 seeds (runs alike but for `seed`) is resampled by
drawing k of its seeds with replacement, and scoring each drawn seed on the items' resample b. Seeds and
items are crossed, not nested: every seed is scored on the same test items, so one item resample applies
to every drawn seed (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat.; a separate item draw per
seed would treat the one test set as k independent ones and shrink its noise by 1/k). Resample b of the
row is the mean over its k slots of S[draws[b, m], b], S[j] the item resamples of seed j's run, as the
row's score is the mean over its seeds. Rows with the same number of seeds (listed in the same order:
sorted by seed) share the draws, so a difference of two rows is paired by seed too. A row with one seed
is resampled over items only: its interval says nothing of seed noise, and the report says so.

Few seeds (`few_seeds_factor`): the plain two-level bootstrap misjudges a row of k = 2-3 seeds twice. Its
seed draws estimate the seed component from k values, at the plug-in (k - 1) / k of the unbiased
variance and read at normal quantiles with only k - 1 degrees of freedom behind it (2-3 seeds covered
78-84%); and a seed's own item-level noise (another seed predicts some items differently) is counted
twice, once in the item draws and once in the seed draws (Owen 2007 shows the pigeonhole bootstrap
overcounts this interaction term), which over-covers once the seeds differ little. So resample b is split
into its item part, I_b = the mean over the k seeds of their item resample b, and its seed part,
S_b = (the drawn seeds' mean) - I_b, and S_b is rescaled so that the row's variance is the crossed
design's, estimated by the method of moments from the same resamples (Brennan 2001, *Generalizability
Theory*, ch. 3: seeds x items, one observation a cell):
    V_items  = var_b(I_b)                               (item effect / n + noise / (k n))
    noise    = max(0, mean_j var_b(seed j) - V_items) k / (k - 1)   (a seed's item-level noise / n)
    V_seeds  = max(0, s^2 - noise) / k                  (s^2: the seeds' scores' sample variance)
    V        = V_items + V_seeds,  df = (k - 1) (V / V_seeds)^2    (Satterthwaite 1946)
    c^2      = max(0, (t_{df, 0.975} / z_{0.975})^2 V - V_items) / var_b(S_b)
and resample b becomes I_b + c S_b. With no item noise this is c_k = sqrt(k / (k - 1)) t_{k-1,0.975} /
z_{0.975} (c_2 = 9.17, c_3 = 2.69: Student's interval of a mean of k seeds); with seeds that differ no
more than their own item noise explains, c = 0 and the interval is the items' alone. Calibrated for the
95% intervals the reports print; bench/coverage.py measures the coverage it gives.

Saved (`write_resamples`, `read_resamples`): a run's item resamples go beside its item record
(`resamples.npz`) when its trial ends, so that a report reads them instead of recomputing them: each
run's resamples depend only on its record and the bootstrap (B, seed). The file holds one float32 array
of B values per score (float32: the interval ends are printed to 0.01 of scores of about 100; two runs'
differences keep 6 significant digits) and the bootstrap it was drawn with; a report with another B,
seed or format recomputes from the record instead."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from harness.choices import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.staging import written_atomically
from harness.stats.item_scores import Scores, item_scores


@dataclass(frozen=True)
class Resampler:
    """B resamples (`resamples`) from a fixed bootstrap `seed`."""

    resamples: int = BOOTSTRAP_RESAMPLES
    seed: int = BOOTSTRAP_SEED

    def _generator(self, *key: object) -> np.random.Generator:
        words = [zlib.crc32(str(part).encode()) for part in key]
        return np.random.default_rng(np.random.SeedSequence([self.seed, *words]))

    def counts(self, stratum: str, n: int) -> np.ndarray:
        """[B, n] counts: row b is how often each item is drawn in resample b (each row sums to n)."""
        return _counts(self, stratum, n)

    def seed_draws(self, seeds: Sequence[object]) -> np.ndarray:
        """[B, k] positions of the seeds drawn (with replacement) in each resample of a row of these k
        seeds: rows with the same seeds share the draws (paired by seed), others are drawn apart."""
        return self._generator("seeds", *seeds).integers(0, len(seeds), size=(self.resamples, len(seeds)))


@functools.lru_cache(maxsize=256)
def _counts(resampler: Resampler, stratum: str, n: int) -> np.ndarray:
    """Drawn once per process: the report's rows share a stratum's resamples (cached, as uint8)."""
    generator = resampler._generator("items", stratum, n)
    out = np.empty((resampler.resamples, n), dtype=np.uint8)  # an item drawn 256 times: never seen
    step = max(1, 2_000_000 // max(n, 1))
    for start in range(0, resampler.resamples, step):
        rows = min(step, resampler.resamples - start)
        drawn = generator.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n)
        if counts.max() > 255:  # but then it is kept exactly, at twice the memory
            out = out.astype(np.uint16)
        out[start : start + rows] = counts
    out.setflags(write=False)
    return out


def item_resamples(
    record: pd.DataFrame, resampler: Resampler, metrics: Iterable[str] | None = None
) -> Scores:
    """One run's B item resamples of each score (of `metrics`, or all the record gives)."""
    return item_scores(record, resampler.counts, None if metrics is None else list(metrics))


def few_seeds_factor(scores: np.ndarray, seed_part: np.ndarray) -> float:
    """c for a row's [k, B] per-seed item resamples and its seed part S_b (module docstring)."""
    from scipy.stats import norm, t

    k = scores.shape[0]
    seeds = float(np.var(scores.mean(axis=1), ddof=1)) / k  # (seed effect + noise / n) / k
    if not np.any(seed_part) or seeds == 0:
        return 0.0
    item_part = scores.mean(axis=0)
    items = float(np.var(item_part))  # item effect / n + noise / (k n)
    noise = max(0.0, float(np.mean(np.var(scores, axis=1))) - items) * k / (k - 1)  # noise / n
    # each component at its own quantile: the items' (interaction removed) at the normal's, the seeds' at
    # Student's with k - 1 degrees of freedom
    wanted = 2 * np.sqrt(
        norm.ppf(0.975) ** 2 * max(items - noise / k, 0.0) + t.ppf(0.975, k - 1) ** 2 * seeds
    )

    def width(c: float) -> float:
        low, high = np.percentile(item_part + c * seed_part, [2.5, 97.5])
        return float(high - low)

    if width(0.0) >= wanted:
        return 0.0
    low, high = 0.0, 1.0
    while width(high) < wanted:
        low, high = high, 2 * high
    for _ in range(30):  # bisection: the width grows with c
        middle = (low + high) / 2
        low, high = (middle, high) if width(middle) < wanted else (low, middle)
    return high


def seed_resamples(
    per_seed: Sequence[Scores],
    resampler: Resampler,
    seeds: Sequence[object] | None = None,
    few_seeds_correction: bool = True,
) -> Scores:
    """A row's two-level resamples from its k seeds' item resamples (in the order of `seeds`, their
    names; default 0..k-1): resample b is the mean over all k seeds of their item resample b, plus c_k
    times the drawn seeds' departure from it (the mean over k slots of the item resample b of seed
    draws[b, m], minus that mean; `few_seeds_factor`; c = 1 without `few_seeds_correction`, the plain
    two-level bootstrap, kept for bench/coverage.py's comparison). A score some seed lacks is left out."""
    k = len(per_seed)
    if k == 1:
        return dict(per_seed[0])
    draws = resampler.seed_draws(list(range(k)) if seeds is None else list(seeds))
    rows = np.arange(resampler.resamples)[:, None]
    shared = set.intersection(*(set(scores) for scores in per_seed))
    out = {}
    for name in sorted(shared):
        scores = np.stack([per_seed[j][name] for j in range(k)])  # [k, B]
        items = scores.mean(axis=0)
        seed_part = scores[draws, rows].mean(axis=1) - items
        factor = few_seeds_factor(scores, seed_part) if few_seeds_correction else 1.0
        out[name] = items + factor * seed_part
    return out


def resampled_scores(
    records: Sequence[pd.DataFrame],
    resampler: Resampler,
    metrics: Iterable[str] | None = None,
    seeds: Sequence[object] | None = None,
    few_seeds_correction: bool = True,
) -> Scores:
    """A row's B resampled scores: `records` are its runs' item records, one per seed in seed order
    (`seeds` their names); one record: items only; k >= 2: seeds, then items (module docstring)."""
    metrics = None if metrics is None else list(metrics)
    per_seed = [item_resamples(record, resampler, metrics) for record in records]
    return seed_resamples(per_seed, resampler, seeds, few_seeds_correction)


RESAMPLES_ARTIFACT = "resamples.npz"
FORMAT = 2  # bump when a score's resampling changes: older files are then recomputed, not read
_META = "__bootstrap__"


def write_resamples(scores: Scores, resampler: Resampler, path: Path) -> Path:
    """Write the resamples atomically (a temporary file in the same folder, then a rename)."""
    arrays = {name: np.asarray(values, dtype=np.float32) for name, values in scores.items()}
    arrays[_META] = np.array([FORMAT, resampler.resamples, resampler.seed], dtype=np.int64)
    with written_atomically(path) as scratch, open(scratch, "wb") as out:
        np.savez(out, **arrays)
    return path


def read_resamples(path: Path, resampler: Resampler) -> Scores | None:
    """The saved resamples, or None where they were drawn with another bootstrap or format."""
    with np.load(path, allow_pickle=False) as stored:
        meta = stored[_META].tolist() if _META in stored else None
        if meta != [FORMAT, resampler.resamples, resampler.seed]:
            return None
        return {name: stored[name].astype(np.float64) for name in stored.files if name != _META}
