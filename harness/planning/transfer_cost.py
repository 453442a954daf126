"""What a trial's transfer tasks cost after their sentences are encoded: the classifier fits of SentEval's
protocols (harness.evaluate.tasks.transfer), timed on the device at hand for `harness plan`.

Each task's protocol runs on its real splits and sizes (so the fits, rows, folds and refits are the
trial's) with random embeddings of the trial's width in place of the model's, whose fits take other
numbers of rounds:
- SentEval's PyTorch classifier: every fit trained for one round (`max_epoch` 0), all together as a trial
  trains them (harness.evaluate.batched_probe), then scaled to `ROUNDS` rounds a fit: a typical count
  measured on real embeddings (bench/transfer_fits.py, all-MiniLM-L6-v2, the 8 tasks at k = 5 and 10:
  RMSprop fits ran 5-12 rounds, 7 on average; Adam's tenacity of 5 keeps a fit at least 6 rounds). An
  embedding whose dev accuracy keeps rising trains longer; the estimate can be off by half either way.
- scikit-learn: one fit in `STRIDE` made for real (the others reuse its model), scaled by `STRIDE`;
  lbfgs stops at 100 iterations, or earlier where the random features let it converge.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.evaluate.probe import Probe
from harness.evaluate.probe_fits import ProbeFit
from harness.evaluate.registry import get_task
from harness.evaluate.tasks.transfer import PRESETS, evaluate_transfer, probe_for

ROUNDS = {"rmsprop": 7, "adam": 8}
STRIDE = 8


@dataclass(frozen=True)
class SampledProbe(Probe):
    """scikit-learn's probe fitting one fit in `STRIDE` for real (counted in `made`)."""

    made: list = field(default_factory=list)

    def fit_one(self, table: np.ndarray, labels: np.ndarray, fit: ProbeFit) -> Any:
        if len(self.made) % STRIDE == 0:
            self.made.append(super().fit_one(table, labels, fit))
        else:
            self.made.append(self.made[-1])
        return self.made[-1]


def random_embeddings(sentences: set[str], width: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((len(sentences), width)).astype(np.float32)
    return dict(zip(sorted(sentences), vectors, strict=True))


def fit_seconds(tasks: list[str], width: int, classifier: str, preset: str, device: torch.device,
                data_dir: Path, variant: str = "senteval") -> float:  # fmt: skip
    """Estimated seconds of the classifier fits of `tasks` (transfer tasks) on embeddings of `width`."""
    total = 0.0
    for name in tasks:
        task = get_task(name)
        splits = task.load(data_dir, variant)
        vectors = random_embeddings(set(task.sentences(splits)), width)
        probe = probe_for(classifier, str(device))
        if probe.torch is not None:
            scale = ROUNDS[probe.torch.optim]
            probe = replace(probe, torch=replace(probe.torch, max_epoch=0))
        else:
            probe, scale = SampledProbe(), STRIDE
        start = time.perf_counter()
        evaluate_transfer(name, splits, vectors, PRESETS[preset], probe)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        total += (time.perf_counter() - start) * scale
    return total
