"""Synthetic data for the transfer-probe tests, and the fixture that fits them on one thread."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def one_thread() -> Iterator[None]:
    """The test on one BLAS thread (as `evaluate_transfer` fits) and one torch thread: these small
    fits are faster so, and their time does not grow with other processes on the machine's cores."""
    import torch

    from harness.evaluate.tasks.transfer import one_blas_thread

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with one_blas_thread():
            yield
    finally:
        torch.set_num_threads(threads)


def separable(n: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    centres = rng.normal(size=(classes, 16)) * 10
    return centres[y] + rng.normal(size=(n, 16)), y


def noisy(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes, so the choice of C and the fold assignment change the scores."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, 20)) + 0.4 * y[:, None] * rng.normal(size=20), y
