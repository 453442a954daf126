"""A run's item resamples, saved beside its item record (`resamples.npz`) when its trial ends, so that a
report reads them instead of recomputing them: each run's resamples depend only on its record and the
bootstrap (B, seed), and rows, tables and claims combine them (harness.stats.resample).

The file holds one float32 array of B values per score (float32: the interval ends are printed to 0.01 of
scores of about 100; two runs' differences keep 6 significant digits) and the bootstrap it was drawn with;
a report with another B, seed or format recomputes from the record instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.staging import written_atomically
from harness.stats.item_scores import Scores
from harness.stats.resample import Resampler

ARTIFACT = "resamples.npz"
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
