import math

import numpy as np
import pytest

from harness.data.senteval import STSPairs
from harness.evaluate.tasks.geometry import alignment, geometry, uniformity


def test_alignment_and_uniformity_by_hand() -> None:
    x = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert alignment(x, x * 3) == pytest.approx(0.0)
    assert alignment(x, x[::-1]) == pytest.approx(2.0)  # orthogonal unit vectors: ||a - b||^2 = 2
    assert uniformity(x) == pytest.approx(-4.0)  # log exp(-2 * 2)
    three = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])  # squared distances 4, 2, 2
    assert uniformity(three) == pytest.approx(math.log((math.exp(-8) + 2 * math.exp(-4)) / 3))


def test_geometry_uses_pairs_scored_at_least_four() -> None:
    emb = {"a": np.array([1.0, 0.0]), "b": np.array([1.0, 0.0]), "c": np.array([0.0, 1.0])}
    pairs = STSPairs("x", ["a", "a"], ["b", "c"], np.array([4.0, 3.9]))
    result = geometry(pairs, emb)
    assert result["alignment"] == pytest.approx(0.0) and result["n_pos"] == 1 and result["n"] == 3
