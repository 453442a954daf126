"""`harness eval --limit N`: each task scored on a subset of at most N items per subset or split, for a
quick look (as lm-eval's --limit). The subset is a fixed random sample (seed 0, kept in file order), not
the file's first N lines: SentEval's MR and CR list every positive sentence before the negatives, so a
head would hold one class. Scores on a subset are not the paper's and are marked so wherever they are
written (`LIMIT_NOTE`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from harness.errors import HarnessError

SEED = 0
LIMIT_NOTE = "scores on a fixed sample of the items (--limit), not comparable with full-set or published ones"


def limited(data: Any, n: int) -> Any:
    """`data` with every sized dataclass in it (an STS subset's pairs, a transfer split) cut to a sample of
    at most `n` items; tuples, lists and dicts are walked, their structure kept."""
    if isinstance(data, tuple | list):
        return type(data)(limited(part, n) for part in data)
    if isinstance(data, dict):
        return {key: limited(part, n) for key, part in data.items()}
    if dataclasses.is_dataclass(data) and not isinstance(data, type) and hasattr(data, "__len__"):
        return _sampled(data, n)
    raise HarnessError(f"--limit cannot cut task data of type {type(data).__name__}; run without --limit")


def _sampled(data: Any, n: int) -> Any:
    """The dataclass with each of its per-item fields (a list or array as long as it) at the sampled rows."""
    size = len(data)
    if size <= n:
        return data
    keep = np.sort(np.random.default_rng(SEED).choice(size, n, replace=False))
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(data):
        value = getattr(data, field.name)
        if isinstance(value, np.ndarray) and len(value) == size:
            changes[field.name] = value[keep]
        elif isinstance(value, list) and len(value) == size:
            changes[field.name] = [value[i] for i in keep]
    return dataclasses.replace(data, **changes)
