"""Report evidence with given resamples: a real `Evidence` whose runs' resampled scores are set by the
test (the resampling itself is tested in tests/stats), so a table's or a claim's statistics can be worked
out by hand."""

from __future__ import annotations

import numpy as np

from harness.report.evidence import Evidence
from harness.stats.resample import Resampler

B = 1000


def known_evidence(values: dict[str, np.ndarray], metric: str) -> Evidence:
    """Evidence whose run `run_id`'s B resamples of `metric` are `values[run_id]`."""
    evidence = Evidence(tracker=None, resampler=Resampler(B, seed=1))  # type: ignore[arg-type]
    evidence._runs.update({run: {metric: vector} for run, vector in values.items()})
    return evidence


def around(value: float, seed: int, spread: float = 0.1) -> np.ndarray:
    """B resamples close to `value`."""
    return value + np.random.default_rng(seed).normal(0.0, spread, B)
