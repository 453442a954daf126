"""The per-item record of a final evaluation: what each test item got, beside its gold value, so that every
score can be recomputed from the record alone (and equals the logged score) and resampled.

One row per item, columns:
- `task`: the evaluation task (`STS12`, `MR`, `CoLA`, `sst`, ...);
- `protocol`: how the task's scores are built from its items (harness.stats.item_scores.PROTOCOLS):
  `sts` (cosine vs gold, Spearman / Pearson per subset), `senteval_cv` (mean over folds of each fold's
  accuracy), `senteval_test` (accuracy; MRPC also F1), `glue` (the task's GLUE metrics), `cs224n`
  (SST-5 / Quora accuracy, STS Pearson r);
- `subset`: the STS subset (`MSRpar`, ...), else the task's name;
- `fold`: the outer fold of a cross-validated item (its prediction is out-of-fold), else -1;
- `item`: the item's position in its subset as the task's data orders it;
- `prediction`: the pair's cosine, the predicted class, or the predicted score;
- `gold`: the gold score or class.

Stored as one Parquet file per run (`items.parquet`, dictionary-encoded strings, float64 predictions):
a few hundred KB for STS12-16, STS-B and SICK-R, read back whole by the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from harness.staging import written_atomically

ARTIFACT = "items.parquet"
COLUMNS = ("task", "protocol", "subset", "fold", "item", "prediction", "gold")


def item_rows(
    task: str,
    protocol: str,
    prediction: Sequence[float] | np.ndarray,
    gold: Sequence[float] | np.ndarray,
    subset: str | None = None,
    fold: Sequence[int] | np.ndarray | None = None,
) -> pd.DataFrame:
    """The record of one task (or one subset of it): `prediction[i]` and `gold[i]` for item i."""
    prediction, gold = np.asarray(prediction, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if prediction.shape != gold.shape or prediction.ndim != 1:
        raise ValueError(f"{task}: predictions {prediction.shape} and gold {gold.shape} differ")
    n = len(prediction)
    return pd.DataFrame(
        {
            "task": task,
            "protocol": protocol,
            "subset": subset or task,
            "fold": np.full(n, -1, np.int16) if fold is None else np.asarray(fold, dtype=np.int16),
            "item": np.arange(n, dtype=np.int32),
            "prediction": prediction,
            "gold": gold,
        }
    )


def concat_items(parts: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Several tasks' records as one (an empty record where there are none)."""
    if not parts:
        return pd.DataFrame({name: pd.Series(dtype=_DTYPES[name]) for name in COLUMNS})
    return pd.concat(parts, ignore_index=True)


_DTYPES = {"task": "object", "protocol": "object", "subset": "object", "fold": "int16", "item": "int32",
           "prediction": "float64", "gold": "float64"}  # fmt: skip


def write_items(frame: pd.DataFrame, path: Path) -> Path:
    """Write the record to `path` atomically (a temporary file in the same folder, then a rename)."""
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"an item record needs the columns {missing}")
    stored = frame[list(COLUMNS)].copy()
    for column in ("task", "protocol", "subset"):
        stored[column] = stored[column].astype("category")
    with written_atomically(path) as scratch:
        stored.to_parquet(scratch, index=False, compression="zstd")
    return path


def read_items(path: Path) -> pd.DataFrame:
    """A record written by `write_items`, strings as plain objects."""
    frame = pd.read_parquet(path)
    for column in ("task", "protocol", "subset"):
        frame[column] = frame[column].astype(str)
    return frame
