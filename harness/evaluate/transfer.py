"""SentEval's transfer protocol: logistic regression on frozen sentence embeddings.

Three ways to pick the L2 strength C and measure accuracy (x 100), following SentEval's scikit-learn
path (Conneau and Kiela, 2018), seed 1111:

- `inner_kfold` (MR, CR, SUBJ, MPQA): outer stratified k-fold; inside each outer training part an inner
  stratified k-fold picks C from {2^-2, ..., 2^3}; retrain on the outer training part, score the outer
  test fold; report the mean over outer folds.
- `kfold_then_test` (TREC, MRPC): stratified k-fold on train picks C from {2^-1, ..., 2^5}; retrain on all
  of train, score the fixed test set (MRPC also F1 of the paraphrase class).
- `split` (SST2, SST5): C from {2^-2, ..., 2^3} chosen on dev, trained on train, scored on test.

MRPC features are [|u - v|, u * v]. k is 5 for the `prototyping` preset and 10 for `default`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold

from harness.choices import TRANSFER_FOLDS
from harness.data.transfer import BINARY_FILES, Labelled

SEED = 1111
PRESETS = TRANSFER_FOLDS
INNER_GRID = [2.0**t for t in range(-2, 4)]
KFOLD_GRID = [2.0**t for t in range(-1, 6)]
SPLIT_GRID = [2.0**t for t in range(-2, 4)]
MAX_ITER = 500

Embeddings = dict[str, np.ndarray]


def _fit(x: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LogisticRegression(C=c, random_state=SEED, max_iter=MAX_ITER).fit(x, y)


def _path_scores(
    x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, grid: list[float]
) -> list[float]:
    """Test accuracy for every C of the (increasing) grid, each fit warm-started from the previous C's
    solution: the same optimum, a fraction of the L-BFGS iterations."""
    clf = LogisticRegression(random_state=SEED, max_iter=MAX_ITER, warm_start=True)
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for c in grid:
            scores.append(clf.set_params(C=c).fit(x, y).score(x_test, y_test))
    return scores


def _best_c(x: np.ndarray, y: np.ndarray, grid: list[float], k: int) -> tuple[float, float]:
    """(C with the best mean stratified k-fold accuracy, that accuracy); ties go to the smaller C."""
    folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=SEED)
    per_fold = [_path_scores(x[tr], y[tr], x[te], y[te], grid) for tr, te in folds.split(x, y)]
    scores = np.mean(per_fold, axis=0)
    best = int(np.argmax(scores))
    return grid[best], float(scores[best])


def inner_kfold(x: np.ndarray, y: np.ndarray, k: int) -> dict[str, float]:
    outer = StratifiedKFold(n_splits=k, shuffle=True, random_state=SEED)
    dev, test = [], []
    for tr, te in outer.split(x, y):
        c, dev_acc = _best_c(x[tr], y[tr], INNER_GRID, k)
        dev.append(dev_acc)
        test.append(_fit(x[tr], y[tr], c).score(x[te], y[te]))
    return {"acc": 100 * float(np.mean(test)), "devacc": 100 * float(np.mean(dev)), "n": len(y)}


def kfold_then_test(
    x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, k: int, f1: bool = False
) -> dict[str, float]:
    c, dev_acc = _best_c(x, y, KFOLD_GRID, k)
    predicted = _fit(x, y, c).predict(x_test)
    scores = {"acc": 100 * float(np.mean(predicted == y_test)), "devacc": 100 * dev_acc, "n": len(y_test)}
    if f1:
        scores["f1"] = 100 * float(f1_score(y_test, predicted))
    return scores


def split(
    x: np.ndarray, y: np.ndarray, x_dev: np.ndarray, y_dev: np.ndarray, x_test: np.ndarray, y_test: np.ndarray
) -> dict[str, float]:
    dev_scores = _path_scores(x, y, x_dev, y_dev, SPLIT_GRID)
    best = int(np.argmax(dev_scores))
    test = _fit(x, y, SPLIT_GRID[best]).score(x_test, y_test)
    return {"acc": 100 * float(test), "devacc": 100 * float(dev_scores[best]), "n": len(y_test)}


def features(data: Labelled, embeddings: Embeddings) -> np.ndarray:
    """Sentence embeddings, or [|u - v|, u * v] for sentence pairs."""
    u = np.stack([embeddings[t] for t in data.texts]).astype(np.float64)
    if data.second is None:
        return u
    v = np.stack([embeddings[t] for t in data.second]).astype(np.float64)
    return np.concatenate([np.abs(u - v), u * v], axis=1)


def evaluate_transfer(
    task: str, splits: dict[str, Labelled], embeddings: Embeddings, k: int
) -> dict[str, float]:
    """One transfer task's scores (`acc`, `devacc`, `n`, and `f1` for MRPC)."""
    if task in BINARY_FILES:
        data = splits["all"]
        return inner_kfold(features(data, embeddings), data.labels, k)
    if task in ("SST2", "SST5"):
        parts = [(features(splits[s], embeddings), splits[s].labels) for s in ("train", "dev", "test")]
        return split(*parts[0], *parts[1], *parts[2])
    train, test = splits["train"], splits["test"]
    return kfold_then_test(
        features(train, embeddings),
        train.labels,
        features(test, embeddings),
        test.labels,
        k,
        f1=task == "MRPC",
    )
