"""What a transfer protocol asks of its probe: the classifiers of one call, each described before any is
made (`ProbeFit`), and those chosen from earlier ones' validation accuracies (`Refit`). harness.evaluate.probe
makes them one by one, harness.evaluate.batched_probe all together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ProbeFit:
    """One classifier of a protocol call: the rows of the call's feature table it trains on, its
    regularisation (scikit-learn's C, or the PyTorch classifier's L2 `weight_decay`), and the rows it
    early-stops on (PyTorch; None: a random 5% of `train`, as SentEval's refits)."""

    train: np.ndarray
    reg: float
    validation: np.ndarray | None = None


@dataclass(frozen=True)
class Refit:
    """A fit decided by earlier fits of the same call: once the fits at positions `after` have stopped,
    `choose(their accuracies on their validation rows)` gives it (SentEval's refit with the grid's best
    regularisation). It stands after them in the call's list."""

    after: range
    choose: Callable[[list[float]], ProbeFit]
