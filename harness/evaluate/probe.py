"""The logistic regression a transfer task fits on frozen embeddings, and how its fits are made.

A protocol call (harness.evaluate.tasks.transfer) first lists every classifier it needs, each a `ProbeFit`
(rows of one feature table, a regularisation value, the rows it early-stops on), then has the `Probe`
make them all at once (`fit_all`) and asks the result for predictions by fit (`Fitted.predict`). So a probe
decides how its fits run:

- scikit-learn (SentEval's `usepytorch=False`): `LogisticRegression(C=c, random_state=1111)` per fit, from
  scratch, one after another on one BLAS thread (validation rows unused). Threads do not pay here: lbfgs
  holds the GIL between its small BLAS calls (MR's 30 inner fits: 0.46 s one by one, 0.50 s on two threads);
  a warm start from the previous C gives other numbers (lbfgs stops at its 100 iterations on SST5 and TREC).
- SentEval's PyTorch logistic regression (`usepytorch=True`): every fit of the call trained together as one
  batched model (harness.evaluate.batched_probe), bit-identical on a CPU to fitting them one by one with
  `TorchLogisticRegression` (`together=False`, the reference the tests and bench/transfer_fits.py compare
  with), on `device` (the encoder's: SentEval fits it on CUDA).

The PyTorch classifier's number of classes is the task's (SentEval's `nclasses`, set per task file:
facebookresearch/SentEval@628db91 senteval/binary.py:52 `'nclasses': 2`): the largest label of the whole
table plus one, the same for every fit of the call (the harness computed it per fit before; the same on
the shipped data).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np

from harness.evaluate.probe_fits import ProbeFit, Refit
from harness.evaluate.torch_probe import TorchProbeConfig

SEED = 1111
INNER_GRID = [2.0**t for t in range(-2, 4)]
KFOLD_GRID = [2.0**t for t in range(-1, 6)]
SPLIT_GRID = [2.0**t for t in range(-2, 4)]
TORCH_GRID = [10.0**t for t in range(-5, -1)]


class Fitted(Protocol):
    """The fits of one `fit_all` call, asked by position."""

    def predict(self, which: Sequence[int], rows: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The predicted class of each row of `rows[i]` (rows of the table) by fit `which[i]`."""
        ...

    def score(self, which: Sequence[int], rows: Sequence[np.ndarray], labels: np.ndarray) -> list[float]:
        """Fit `which[i]`'s accuracy on `rows[i]` (SentEval's `clf.score`), for every i."""
        ...


@dataclass
class OneByOne:
    """Fits made one at a time, each a model with `predict(x)` and `score(x, y)`."""

    table: np.ndarray
    models: list[Any]

    def predict(self, which: Sequence[int], rows: Sequence[np.ndarray]) -> list[np.ndarray]:
        pairs = zip(which, rows, strict=True)
        return [np.asarray(self.models[w].predict(self.table[r])).reshape(-1) for w, r in pairs]

    def score(self, which: Sequence[int], rows: Sequence[np.ndarray], labels: np.ndarray) -> list[float]:
        pairs = zip(which, rows, strict=True)
        return [float(self.models[w].score(self.table[r], labels[r])) for w, r in pairs]


@dataclass(frozen=True)
class Probe:
    """How one classifier is built and fitted (module docstring): scikit-learn's (`torch` None), or
    SentEval's PyTorch one with `torch`'s settings, on `device`, all fits together unless `together` is
    off."""

    torch: TorchProbeConfig | None = None
    device: str = "cpu"
    together: bool = True

    def grid(self, protocol: str) -> list[float]:
        """SentEval's regularisation grid: C per protocol (validation.py:60, :122, :199), or the PyTorch
        classifier's L2 10^-5..10^-2 for every protocol."""
        if self.torch is not None:
            return TORCH_GRID
        return {"inner": INNER_GRID, "kfold": KFOLD_GRID, "split": SPLIT_GRID}[protocol]

    def fit_all(self, table: np.ndarray, labels: np.ndarray, fits: Sequence[ProbeFit | Refit]) -> Fitted:
        """Every fit of one protocol call on rows of `table` (labels `labels`), in order; a `Refit` once
        the fits it follows have stopped (fitted together: as soon as they have, beside the others)."""
        if self.torch is not None and self.together:
            from harness.evaluate.batched_probe import fit_together

            return fit_together(table, labels, fits, int(labels.max()) + 1, self.torch, self.device)
        done = OneByOne(table, [])
        for fit in fits:
            if isinstance(fit, Refit):
                # what a refit follows: grid fits, each scored on its own fold
                followed = [cast(ProbeFit, fits[i]) for i in fit.after]
                held = cast(list[np.ndarray], [f.validation for f in followed])
                fit = fit.choose(done.score(fit.after, held, labels))
            done.models.append(self.fit_one(table, labels, fit))
        return done

    def fit_one(self, table: np.ndarray, labels: np.ndarray, fit: ProbeFit) -> Any:
        """One fit alone: scikit-learn's, or SentEval's PyTorch classifier (`TorchLogisticRegression`)."""
        x, y = table[fit.train], labels[fit.train]
        if self.torch is None:
            return _sklearn_fit(x, y, fit.reg)
        from harness.evaluate.torch_probe import TorchLogisticRegression

        model = TorchLogisticRegression(
            table.shape[1], int(labels.max()) + 1, fit.reg, self.torch, self.device
        )
        held = None if fit.validation is None else (table[fit.validation], labels[fit.validation])
        return model.fit(x, y, held)


def _sklearn_fit(x: np.ndarray, y: np.ndarray, c: float) -> Any:
    """`LogisticRegression(C=c, random_state=1111)` as SentEval builds it (its convergence warnings
    silenced: lbfgs stops at 100 iterations on SST5 and TREC, as SentEval's does)."""
    from sklearn.exceptions import ConvergenceWarning  # here: `harness tasks` needs no scikit-learn
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=c, random_state=SEED).fit(x, y)
