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

Spearman runs over blocks of rows, so that memory stays at a few blocks of [rows, n] float64."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Rows per block: a [32, 5000] block's temporaries stay in cache, where larger blocks ran 2-4x slower;
# two threads, the cores CI and the developers' machines have.
BLOCK, BLOCK_ITEMS = 32, 160_000  # at least BLOCK rows, about BLOCK_ITEMS weights a block
THREADS = 2


def weighted_sums(weights: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """[B, c]: each row's weighted sums of the item columns [n, c], the uint8 weights made float a block
    of rows at a time (a GLUE dev set's [4000, 40k] weights would be 1.3 GB as float64)."""
    rows = max(BLOCK, BLOCK_ITEMS // max(weights.shape[1], 1))
    columns = np.asarray(columns, dtype=np.float64)
    return np.concatenate([np.asarray(weights[start : start + rows], dtype=np.float64) @ columns
                           for start in range(0, len(weights), rows)])  # fmt: skip


def accuracy(weights: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """Weighted share of correct items, per row."""
    sums = weighted_sums(weights, np.stack([np.ones(len(correct)), correct], axis=1))
    return sums[:, 1] / sums[:, 0]


def pearson(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Pearson r of x and y, per row (centred on the unweighted means first, for precision)."""
    x = np.asarray(x, dtype=np.float64) - np.mean(x)
    y = np.asarray(y, dtype=np.float64) - np.mean(y)
    moments = np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], axis=1)
    sums = weighted_sums(weights, moments)
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
    total = np.add.reduceat(w[:, order], starts, axis=1, dtype=np.float64)
    return np.cumsum(total, axis=1) - (total - 1.0) / 2.0, total


def _spearman_block(w: np.ndarray, x: tuple, y: tuple) -> np.ndarray:
    """Spearman rho of one block of weight rows. In x's sorted order the cumulative weight c gives each
    item's average rank: (c before its tie group + c at the group's end + 1) / 2, which without ties is
    c - (w - 1) / 2 (an integer cumulative sum, no sort); y's few tie groups (gold scores) are summed."""
    n = w.sum(axis=1, dtype=np.float64)
    centre = n * ((n + 1.0) / 2.0) ** 2  # n * mean^2: the mean of average ranks is always (n + 1) / 2
    rank_y, total_y = _group_ranks(w, y[0], y[1])
    syy = np.einsum("ij,ij->i", total_y * rank_y, rank_y) - centre
    order, starts, _ = x
    ordered = w[:, order]
    cumulative = np.cumsum(ordered, axis=1, dtype=np.int32)
    if len(starts) == w.shape[1]:  # no ties in x
        rank_x = cumulative - (ordered - 1.0) / 2.0
    else:
        padded = np.concatenate([np.zeros((len(w), 1), np.int32), cumulative], axis=1)
        first, last = _group_bounds(starts, w.shape[1])
        rank_x = (padded[:, first] + padded[:, last] + 1.0) / 2.0
    weighted_rank = ordered * rank_x
    sxx = np.einsum("ij,ij->i", weighted_rank, rank_x) - centre
    sxy = np.einsum("ij,ij->i", weighted_rank, rank_y[:, y[2][order]]) - centre
    return sxy / np.sqrt(sxx * syy)


def _group_bounds(starts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For each sorted position, its tie group's start and end (exclusive) as positions in a cumulative
    sum padded with a leading 0."""
    sizes = np.diff(np.r_[starts, n])
    return np.repeat(starts, sizes), np.repeat(np.r_[starts[1:], n], sizes)


def spearman(weights: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Weighted Spearman rho of x and y, per row: Pearson r of the repeated items' average ranks; blocks
    of rows on two threads (numpy releases the GIL in these loops)."""
    gx, gy = _groups(np.asarray(x, dtype=np.float64)), _groups(np.asarray(y, dtype=np.float64))
    rows = max(BLOCK, BLOCK_ITEMS // max(len(gx[0]), 1))  # small subsets: fewer, longer blocks
    starts = range(0, len(weights), rows)
    with ThreadPoolExecutor(THREADS) as pool:
        parts = list(pool.map(lambda start: _spearman_block(weights[start : start + rows], gx, gy), starts))
    return np.concatenate(parts) if parts else np.empty(0)


def confusion(weights: np.ndarray, predicted: np.ndarray, gold: np.ndarray) -> tuple[np.ndarray, ...]:
    """Weighted (true positives, false positives, false negatives, true negatives) of class 1, per row."""
    p, g = predicted == 1, gold == 1
    cells = np.stack([p & g, p & ~g, ~p & g, ~p & ~g], axis=1)
    return tuple(weighted_sums(weights, cells).T)


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
