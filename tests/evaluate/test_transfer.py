"""The SentEval protocols on synthetic data: separable sets reach 100%, shuffled labels stay near chance."""

import numpy as np
import pytest

from harness.evaluate.transfer import inner_kfold, kfold_then_test, split


def separable(n: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    centres = rng.normal(size=(classes, 16)) * 10
    return centres[y] + rng.normal(size=(n, 16)), y


def test_separable_sets_reach_100() -> None:
    x, y = separable(200, 2, 0)
    assert inner_kfold(x, y, 5)["acc"] == pytest.approx(100.0)
    x_test, y_test = separable(60, 3, 1)
    x3, y3 = separable(150, 3, 1)
    scores = kfold_then_test(x3, y3, x_test, y_test, 5)
    assert scores["acc"] == pytest.approx(100.0) and scores["devacc"] == pytest.approx(100.0)
    assert split(x3, y3, x_test, y_test, x_test, y_test)["acc"] == pytest.approx(100.0)


def test_shuffled_labels_stay_near_chance() -> None:
    x, y = separable(400, 2, 2)
    shuffled = np.random.default_rng(3).permutation(y)
    assert 35.0 <= inner_kfold(x, shuffled, 5)["acc"] <= 65.0
    x_test, y_test = separable(400, 2, 4)
    scores = kfold_then_test(x, shuffled, x_test, np.random.default_rng(5).permutation(y_test), 5, f1=True)
    assert 35.0 <= scores["acc"] <= 65.0 and 0.0 <= scores["f1"] <= 100.0


def test_f1_is_of_the_positive_class() -> None:
    x, y = separable(100, 2, 6)
    scores = kfold_then_test(x, y, x, y, 5, f1=True)
    assert scores["f1"] == pytest.approx(100.0)
