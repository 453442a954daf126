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

Few seeds: the plain two-level bootstrap reads a spread of 2-3 seeds at normal quantiles and counts a
seed's item-level noise twice; each row's seed part is rescaled to the crossed design's interval, and a
difference of two rows is corrected as one (harness.stats.few_seeds, with the coverage it gives).

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
from typing import Any

import numpy as np
import pandas as pd

from harness.choices import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from harness.staging import written_atomically
from harness.stats.few_seeds import components, factor, unpaired_components
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


def _parts(per_seed: Sequence[Scores], resampler: Resampler, seeds: Sequence[object] | None,
           name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """A row's [k, B] per-seed resamples of `name`, its item part I_b and its plain seed part S_b (0 for
    one seed)."""
    k = len(per_seed)
    if k == 1:
        return per_seed[0][name][None], per_seed[0][name], np.zeros_like(per_seed[0][name])
    draws = resampler.seed_draws(list(range(k)) if seeds is None else list(seeds))
    scores = np.stack([per_seed[j][name] for j in range(k)])
    items = scores.mean(axis=0)
    return scores, items, scores[draws, np.arange(resampler.resamples)[:, None]].mean(axis=1) - items


def _shared(*rows: Sequence[Scores]) -> list[str]:
    """The scores every seed of every row has."""
    return sorted(set.intersection(*(set(scores) for row in rows for scores in row)))


def seed_resamples(
    per_seed: Sequence[Scores],
    resampler: Resampler,
    seeds: Sequence[object] | None = None,
    few_seeds_correction: bool = True,
) -> Scores:
    """A row's two-level resamples from its k seeds' item resamples (in the order of `seeds`, their
    names; default 0..k-1): resample b is the mean over all k seeds of their item resample b, plus c times
    the drawn seeds' departure from it (the mean over k slots of the item resample b of seed draws[b, m],
    minus that mean; c from harness.stats.few_seeds; c = 1 without `few_seeds_correction`, the plain
    two-level bootstrap, kept for bench/coverage.py's comparison). A score some seed lacks is left out."""
    if len(per_seed) == 1:
        return dict(per_seed[0])
    out = {}
    for name in _shared(per_seed):
        scores, items, seed_part = _parts(per_seed, resampler, seeds, name)
        c = factor(items, seed_part, components(scores)) if few_seeds_correction else 1.0
        out[name] = items + c * seed_part
    return out


def _combined(vectors: Sequence[np.ndarray], signs: Sequence[float]) -> np.ndarray:
    """sum_i signs[i] * vectors[i] (in order, so a difference is exactly a - b)."""
    total = signs[0] * vectors[0]
    for vector, sign in zip(vectors[1:], signs[1:], strict=True):
        total = total + sign * vector
    return total


def seed_contrast(
    rows: Sequence[Sequence[Scores]],
    signs: Sequence[float],
    resampler: Resampler,
    seeds: Sequence[Sequence[object] | None] | None = None,
    few_seeds_correction: bool = True,
) -> Scores:
    """Resamples of sum_i signs[i] * row_i (each row its seeds' item resamples, `seeds` their names), the
    few-seeds correction made on the contrast (harness.stats.few_seeds): rows all of the same seeds are
    paired, the rule run on their per-seed contrasts; others get one c for every seed part, Welch's degrees
    of freedom. Without `few_seeds_correction`, each row's plain two-level resamples, combined."""
    named = [None] * len(rows) if seeds is None else list(seeds)
    if not few_seeds_correction or all(len(row) == 1 for row in rows):
        plain = [
            seed_resamples(row, resampler, n, few_seeds_correction)
            for row, n in zip(rows, named, strict=True)
        ]
        return {name: _combined([p[name] for p in plain], signs) for name in _shared(*([p] for p in plain))}
    names = [list(range(len(row))) if n is None else list(n) for row, n in zip(rows, named, strict=True)]
    if all(n == names[0] for n in names):
        per_seed = [
            {m: _combined([row[j][m] for row in rows], signs) for m in _shared(*([r[j]] for r in rows))}
            for j in range(len(names[0]))
        ]
        return seed_resamples(per_seed, resampler, names[0])
    out = {}
    for name in _shared(*rows):
        parts = [_parts(row, resampler, n, name) for row, n in zip(rows, names, strict=True)]
        items = _combined([part[1] for part in parts], signs)
        seed_part = _combined([part[2] for part in parts], signs)
        wanted = unpaired_components([part[0] for part in parts], signs)
        out[name] = items + factor(items, seed_part, wanted) * seed_part
    return out


def seed_difference(
    a: Sequence[Scores],
    b: Sequence[Scores],
    resampler: Resampler,
    seeds: tuple[Sequence[object] | None, Sequence[object] | None] = (None, None),
    few_seeds_correction: bool = True,
) -> Scores:
    """Resamples of row a minus row b, corrected as one (`seed_contrast` with signs +1, -1)."""
    return seed_contrast([a, b], [1.0, -1.0], resampler, list(seeds), few_seeds_correction)


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
    # Any: mypy checks a **dict's values against savez's own `allow_pickle` too (the names are the scores')
    arrays: dict[str, Any] = {name: np.asarray(values, dtype=np.float32) for name, values in scores.items()}
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
