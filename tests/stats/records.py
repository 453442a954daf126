"""Synthetic item records for the statistics tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.stats.items import concat_items, item_rows


def sts_record(subsets: dict[str, list[int]], noise: float, seed: int, gold_seed: int = 0) -> pd.DataFrame:
    """STS predictions: gold plus noise (lower noise scores higher) for subsets of the given sizes per
    task; the gold comes from its own generator, so records with one `gold_seed` share their items."""
    gold_rng, rng = np.random.default_rng(gold_seed), np.random.default_rng(seed)
    parts = []
    for task, sizes in subsets.items():
        for i, n in enumerate(sizes):
            gold = np.round(gold_rng.uniform(0, 5, n), 1)
            parts.append(
                item_rows(task, "sts", gold + noise * rng.normal(size=n), gold, subset=f"{task}-s{i}")
            )
    return concat_items(parts)
