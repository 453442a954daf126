"""Scores of resampled items without materialising the resamples: a bootstrap resample of n items is a
count vector w (item i drawn w_i times, sum n), and a score of the resample equals the score of the
original items with each item repeated w_i times. So every score here takes a weight matrix W [B, n], one
resample a row, and returns B values; a row of ones gives the score of the items themselves.

- accuracy: sum_i w_i [p_i = g_i] / sum_i w_i;
- Pearson r: the correlation of the repeated items, from the weighted sums of x, y, x^2, y^2, xy;
- Spearman rho: Pearson r of the average ranks of the repeated items (ties share the mean of their
  positions, scipy's `rankdata(method="average")`); with items sorted by value, a tie group holding total
  weight t after cumulative weight s has average rank s + (t + 1) / 2, found by a cumulative sum, not a
  sort per resample;
- binary F1 of class 1 and Matthews correlation, from the weighted confusion counts.

Rows are processed in blocks so that memory stays at a few blocks of [rows, n] float64."""

from __future__ import annotations

import numpy as np

BLOCK = 256  # resamples per block: a [256, 5000] float64 block is 10 MB


def blocks(weights: np.ndarray):  # noqa: ANN201 - yields (slice, float64 block)
    for start in range(0, len(weights), BLOCK):
        yield slice(start, start + BLOCK), np.asarray(weights[start : start + BLOCK], dtype=np.float64)


def accuracy(weights: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Weighted share of correct items, per row."""
    w = np.asarray(weights, dtype=np.float64)
    return (w @ correct.astype(np.float64)) / w.sum(axis=1)


def pearson(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Pearson r of x and y, per row (centred on the unweighted means first, for precision)."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    y = np.asarray(y, dtype=np.float64) - np.mean(y)
    moments = np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)
    sums = np.asarray(weights, dtype=np.float64) @ moments
    n, sx, sy, sxx, syy, sxy = sums.T
    cov = sxy - sx * sy / n
    return cov / np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))


def _groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order sorting the values, start of each tie group in that order, each item's group)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(new)
    group_sorted = np.cumsum(new) - 1
    group = np.empty(len(values), dtype=np.int64)
    group[order] = group_sorted
    return order, starts, group


def _group_ranks(w: np.ndarray, order: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(average rank of each tie group, total weight of each group), per row of `w`."""
    total = np.add.reduceat(w[:, order], starts, axis=1)
    before = np.cumsum(total, axis=1) - total
    return before + (total + 1.0) / 2.0, total


def spearman(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Spearman rho of x and y, per row: Pearson r of the repeated items' average ranks."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    gx, gy = _groups(x), _groups(y)
    out = np.empty(len(weights))
    for rows, w in blocks(weights):
        n = w.sum(axis=1)
        mean = (n + 1.0) / 2.0  # the mean of average ranks is always (n + 1) / 2
        rank_x, total_x = _group_ranks(w, gx[0], gx[1])
        rank_y, total_y = _group_ranks(w, gy[0], gy[1])
        sxx = (total_x * rank_x * rank_x).sum(axis=1) - n * mean * mean
        syy = (total_y * rank_y * rank_y).sum(axis=1) - n * mean * mean
        sxy = (w * rank_x[:, gx[2]] * rank_y[:, gy[2]]).sum(axis=1) - n * mean * mean
        out[rows] = sxy / np.sqrt(sxx * syy)
    return out


def confusion(weights: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, ...]:
    """Weighted (true positives, false positives, false negatives, true negatives) of class 1, per row."""
    w = np.asarray(weights, dtype=np.float64)
    p, g = predicted == 1, gold == 1
    cells = np.stack([p & g, p & ~g, ~p & g, ~p & ~g], axis=1).astype(np.float64)
    return tuple((w @ cells).T)


def f1(weights: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Weighted F1 of class 1 (scikit-learn's `f1_score`, binary), per row; 0 where it is undefined."""
    tp, fp, fn, _ = confusion(weights, predicted, gold)
    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=denominator > 0)


def mcc(weights: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Weighted Matthews correlation of a binary prediction (scikit-learn's `matthews_corrcoef`), per
    row; 0 where a margin is empty, as scikit-learn returns."""
    tp, fp, fn, tn = confusion(weights, predicted, gold)
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return np.divide(tp * tn - fp * fn, denominator, out=np.zeros_like(tp), where=denominator > 0)
