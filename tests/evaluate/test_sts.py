"""STS scoring: the three aggregations on hand-made subsets with known answers."""

import math

import numpy as np
import pytest

from harness.data.senteval import STSPairs
from harness.evaluate.sts import cosine, score_task


def subset(name: str, cosines: list[float], gold: list[float]) -> tuple[STSPairs, dict[str, np.ndarray]]:
    """Pairs whose embeddings have exactly the given cosine similarities."""
    left = [f"{name}-l{i}" for i in range(len(cosines))]
    right = [f"{name}-r{i}" for i in range(len(cosines))]
    emb = {s: np.array([1.0, 0.0]) for s in left}
    emb |= {s: np.array([c, math.sqrt(1 - c * c)]) for s, c in zip(right, cosines, strict=True)}
    return STSPairs(name, left, right, np.array(gold, dtype=float)), emb


def test_all_mean_and_wmean_by_hand() -> None:
    a, emb_a = subset("a", [0.1, 0.2], [2.0, 1.0])  # reversed: Spearman -100
    b, emb_b = subset("b", [0.3, 0.4, 0.5], [3.0, 4.0, 5.0])  # monotone: Spearman 100
    scores = score_task([a, b], emb_a | emb_b)
    assert scores["subsets"]["a"]["spearman"] == pytest.approx(-100)
    assert scores["subsets"]["b"]["spearman"] == pytest.approx(100)
    assert scores["spearman_mean"] == pytest.approx(0.0)
    assert scores["spearman_wmean"] == pytest.approx((2 * -100 + 3 * 100) / 5)
    # pooled: predicted ranks 1..5, gold ranks 2,1,3,4,5 -> 1 - 6 * 2 / (5 * 24) = 0.9
    assert scores["spearman"] == pytest.approx(90.0)
    assert scores["n"] == 5


def test_cosine_is_scale_free() -> None:
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[2.0, 0.0], [-3.0, -4.0]])
    np.testing.assert_allclose(cosine(a, b), [1.0, -1.0])
