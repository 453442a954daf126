"""Every fit of a protocol call trained together (harness.evaluate.batched_probe) against the same fits made
one by one with `TorchLogisticRegression` (itself checked against SentEval's classifier in
test_torch_probe.py): the same weights to the last bit on a CPU, whatever the batch holds beside a fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.evaluate.batched_probe import fit_together
from harness.evaluate.probe import Probe
from harness.evaluate.probe_fits import ProbeFit, Refit
from harness.evaluate.torch_probe import CONFIGS, TorchLogisticRegression, TorchProbeConfig
from tests.evaluate.probe_data import one_thread  # noqa: F401 - autouse


def three_classes(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes in 24 dimensions: accuracies well below 100, so rounds stop at different
    times for different fits."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    x = rng.normal(size=(n, 24)) + 0.6 * rng.normal(size=(3, 24))[y]
    return x.astype(np.float32), y


def mixed_fits(n: int, seed: int) -> list[ProbeFit]:
    """Fits of different sizes (so passes have different step counts and last batches), with validation
    rows and with SentEval's held-out 5%, four L2 values, and a group on the same rows (split's grid)."""
    rng = np.random.default_rng(seed)
    fits = []
    for reg in (1e-5, 1e-4, 1e-3, 1e-2):
        for size in (150, 171, 200):
            order = rng.permutation(n)
            fits.append(ProbeFit(order[:size], reg, order[size : size + 60]))
        fits.append(ProbeFit(rng.permutation(n)[:230], reg))
    shared, dev = np.arange(0, 180), np.arange(180, 240)
    return fits + [ProbeFit(shared, reg, dev) for reg in (1e-5, 1e-3, 1e-2)]


def one_by_one(
    x: np.ndarray, y: np.ndarray, fit: ProbeFit, config: TorchProbeConfig
) -> TorchLogisticRegression:
    held = None if fit.validation is None else (x[fit.validation], y[fit.validation])
    return TorchLogisticRegression(x.shape[1], 3, fit.reg, config).fit(x[fit.train], y[fit.train], held)


CONFIG_CASES = {
    "rmsprop": CONFIGS["pytorch"],  # SentEval's prototyping classifier (Liao's)
    "adam": CONFIGS["pytorch_adam"],  # its default one: each fit's own bias correction
    "max_epoch": TorchProbeConfig(tenacity=100, epoch_size=2, max_epoch=4),  # stopped by passes alone
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CONFIG_CASES))
@pytest.mark.parametrize("capacity", [None, 3])
def test_fits_trained_together_are_the_one_by_one_fits_to_the_bit(case: str, capacity: int | None) -> None:
    """Each fit's kept layer, validation accuracy and predictions are exactly those of the same fit made
    alone, with the whole batch at once and with room for 3 (fits joining as others stop)."""
    config = CONFIG_CASES[case]
    x, y = three_classes(320, 0)
    fits = mixed_fits(320, 1)
    together = fit_together(x, y, fits, 3, config, capacity=capacity)
    test = np.arange(240, 320)
    predicted = together.predict(range(len(fits)), [test] * len(fits))
    for i, fit in enumerate(fits):
        alone = one_by_one(x, y, fit, config)
        weight, bias = together.shape.weight(together.best)[i], together.shape.bias(together.best)[i]
        assert torch.equal(weight, alone.model.weight.detach()), f"fit {i}"
        assert torch.equal(bias, alone.model.bias.detach()), f"fit {i}"
        np.testing.assert_array_equal(predicted[i], alone.predict(x[test]))
        if fit.validation is not None:
            assert together.validation_accuracy[i] == alone.score(x[fit.validation], y[fit.validation])


def test_a_refit_follows_its_grid_with_the_grid_s_accuracies() -> None:
    """A `Refit` is made once the fits it follows have stopped, from their validation accuracies (what a
    one-by-one `score` gives), and trained like any fit; the same list made one by one (`together=False`)
    chooses the same and ends on the same predictions."""
    x, y = three_classes(300, 2)
    grid = [ProbeFit(np.arange(0, 200), reg, np.arange(200, 250)) for reg in (1e-5, 1e-3, 1e-2)]
    seen: dict[str, list[float]] = {}

    def choose(way: str) -> Refit:
        def pick(scores: list[float]) -> ProbeFit:
            seen[way] = scores
            return ProbeFit(np.arange(0, 250), grid[int(np.argmax(scores))].reg)

        return Refit(range(3), pick)

    config = CONFIGS["pytorch"]
    together = Probe(config).fit_all(x, y, [*grid, choose("together")])
    alone = Probe(config, together=False).fit_all(x, y, [*grid, choose("alone")])
    assert seen["together"] == seen["alone"] == [one_by_one(x, y, f, config).score(x[200:250], y[200:250])
                                                 for f in grid]  # fmt: skip
    test = [np.arange(250, 300)] * 4
    for a, b in zip(together.predict(range(4), test), alone.predict(range(4), test), strict=True):
        np.testing.assert_array_equal(a, b)


def test_training_together_leaves_the_process_rngs_alone() -> None:
    x, y = three_classes(200, 3)
    torch.manual_seed(5)
    np.random.seed(5)
    before = (torch.rand(1).item(), np.random.rand())
    torch.manual_seed(5)
    np.random.seed(5)
    fit_together(x, y, [ProbeFit(np.arange(150), 1e-4, np.arange(150, 200))], 3, CONFIGS["pytorch"])
    assert (torch.rand(1).item(), np.random.rand()) == before


@pytest.mark.slow
def test_transfer_tasks_on_the_shipped_data_score_the_same_both_ways(data_dir: Path, tiny_bert: Path) -> None:
    """CR (nested k-fold), TREC (k-fold, then test) and SST5 (split) on the shipped SentEval data, embedded
    by the tests' random BERT: scores, dev scores and every item's predicted class, the batched probe
    against one fit at a time (bench/transfer_fits.py does the 8 tasks at k = 5 and 10)."""
    from harness.data.transfer import read_transfer
    from harness.encoders.encoder import Encoder
    from harness.evaluate.encode import EmbeddingCache
    from harness.evaluate.registry import ITEMS
    from harness.evaluate.suite import SentenceEncoder
    from harness.evaluate.tasks.transfer import evaluate_transfer

    splits = {task: read_transfer(data_dir, task) for task in ("CR", "TREC", "SST5")}
    sentences = sorted({s for task in splits.values() for part in task.values() for s in part.sentences()})
    vectors = SentenceEncoder(Encoder(str(tiny_bert), "mean", 32), 256, None, EmbeddingCache(), False)(
        sentences
    )
    config = CONFIGS["pytorch"]
    for task, parts in splits.items():
        together = evaluate_transfer(task, parts, vectors, 3, Probe(config))
        alone = evaluate_transfer(task, parts, vectors, 3, Probe(config, together=False))
        assert {k: v for k, v in together.items() if k != ITEMS} == {
            k: v for k, v in alone.items() if k != ITEMS
        }
        assert together[ITEMS].equals(alone[ITEMS]), task
