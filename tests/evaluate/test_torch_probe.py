"""SentEval's PyTorch logistic regression (harness.evaluate.torch_probe) against a re-implementation of
facebookresearch/SentEval@5d6dc11 classifier.py: the seed, the two configs, the rounds and max_epoch, the
best round kept, and the process's RNGs left alone."""

from __future__ import annotations

import numpy as np
import pytest

from tests.evaluate.probe_data import noisy, one_thread, separable  # noqa: F401 - one_thread: autouse


def test_senteval_pytorch_probe_is_deterministic_and_leaves_the_process_rngs_alone() -> None:
    """SentEval's `usepytorch` logistic regression (harness.evaluate.torch_probe): seeded per classifier
    with 1111, so two fits agree exactly, and the caller's torch / numpy streams are not consumed."""
    import torch

    from harness.evaluate.torch_probe import CONFIGS, TorchLogisticRegression

    x, y = noisy(200, 3)
    x = x.astype(np.float32)
    torch.manual_seed(5)
    np.random.seed(5)
    before = (torch.rand(1).item(), np.random.rand())
    torch.manual_seed(5)
    np.random.seed(5)
    first = TorchLogisticRegression(20, 2, 1e-4, CONFIGS["pytorch"]).fit(x[:150], y[:150], (x[150:], y[150:]))
    second = TorchLogisticRegression(20, 2, 1e-4, CONFIGS["pytorch"]).fit(
        x[:150], y[:150], (x[150:], y[150:])
    )
    assert (torch.rand(1).item(), np.random.rand()) == before
    assert torch.equal(first.model.weight, second.model.weight)
    assert first.score(x[150:], y[150:]) == second.score(x[150:], y[150:])


def senteval_pytorch_fit(
    x: np.ndarray, y: np.ndarray, l2reg: float, validation: tuple | None, classes: int
) -> tuple[object, list[float]]:
    """SentEval@5d6dc11 senteval/tools/classifier.py's MLP(nhid=0) with the prototyping classifier
    (rmsprop, batch 128, tenacity 3, epoch_size 2, max_epoch 200) re-written here on the CPU as the
    reference: seeds numpy and torch with 1111 when built (:25-30), Linear layer, RMSprop with
    `weight_decay = l2reg` (:202-204); a random 5% held out without validation data (:44-49); rounds of
    two shuffled passes (:86-110), the dev accuracy after each, the best round's layer kept (:60-83).
    Returns the kept layer and every round's dev accuracy."""
    import copy

    import torch

    np.random.seed(1111)
    torch.manual_seed(1111)
    model = torch.nn.Linear(x.shape[1], classes)
    optimizer = torch.optim.RMSprop(model.parameters())
    optimizer.param_groups[0]["weight_decay"] = l2reg
    if validation is None:
        permutation = np.random.permutation(len(x))
        dev, train = permutation[: int(0.05 * len(x))], permutation[int(0.05 * len(x)) :]
        validation, x, y = (x[dev], y[dev]), x[train], y[train]
    features, labels = torch.from_numpy(x).float(), torch.from_numpy(y).long()
    dev_x, dev_y = torch.from_numpy(validation[0]).float(), torch.from_numpy(validation[1]).long()
    epoch, best, count, rounds, kept = 0, -1.0, 0, [], None
    while epoch <= 200:
        for _ in range(2):
            permutation = np.random.permutation(len(features))
            for i in range(0, len(features), 128):
                idx = torch.from_numpy(permutation[i : i + 128]).long()
                loss = torch.nn.CrossEntropyLoss()(model(features[idx]), labels[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        epoch += 2
        with torch.no_grad():
            accuracy = float((model(dev_x).argmax(1) == dev_y).float().mean())
        rounds.append(accuracy)
        if accuracy > best:
            best, kept = accuracy, copy.deepcopy(model)
        else:
            if count >= 3:
                break
            count += 1
    return kept, rounds


def overfitting(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Few training rows in many dimensions with a weak signal: the dev accuracy of SentEval's PyTorch
    probe rises, peaks and falls as it fits the training noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 260)
    x = (rng.normal(size=(260, 100)) + 0.3 * y[:, None] * rng.normal(size=100)).astype(np.float32)
    return x[:60], y[:60], x[60:], y[60:]


def test_the_pytorch_probe_is_senteval_s_seeded_classifier() -> None:
    """SentEval's PyTorch logistic regression, seed 1111 (SentEval@5d6dc11 classifier.py:25-30,
    `seed=1111`, `np.random.seed(seed)`, `torch.manual_seed(seed)`): the harness's probe starts from
    the Linear layer `torch.manual_seed(1111)` initialises, and its fit, with validation data and with
    the held-out 5%, ends on exactly the weights of the re-implementation above."""
    import torch

    from harness.evaluate.torch_probe import CONFIGS, TorchLogisticRegression

    torch.manual_seed(1111)
    initial = torch.nn.Linear(100, 2)
    built = TorchLogisticRegression(100, 2, 1e-3, CONFIGS["pytorch"])
    assert torch.equal(built.model.weight, initial.weight) and torch.equal(built.model.bias, initial.bias)
    x, y, x_dev, y_dev = overfitting(0)
    for fit_x, fit_y, validation in ((x, y, (x_dev, y_dev)), (x_dev, y_dev, None)):
        reference, _ = senteval_pytorch_fit(fit_x, fit_y, 1e-3, validation, 2)
        fitted = TorchLogisticRegression(100, 2, 1e-3, CONFIGS["pytorch"]).fit(fit_x, fit_y, validation)
        assert torch.equal(fitted.model.weight, reference.weight)
        assert torch.equal(fitted.model.bias, reference.bias)


def test_the_pytorch_probe_keeps_its_best_round(monkeypatch: pytest.MonkeyPatch) -> None:
    """SentEval keeps the round with the best dev accuracy (SentEval@5d6dc11 classifier.py:77 `bestmodel =
    copy.deepcopy(self.model)`, :82 `self.model = bestmodel`), not the last: each round's dev accuracy and
    weights recorded (the probe scores its validation data once a round), the fitted probe holds the
    first best round's weights and scores its accuracy; here the accuracy falls after its peak."""
    import copy

    from harness.evaluate.torch_probe import CONFIGS, TorchLogisticRegression

    rounds = []
    score = TorchLogisticRegression.score

    def recorded(self: TorchLogisticRegression, x: np.ndarray, y: np.ndarray) -> float:
        accuracy = score(self, x, y)
        rounds.append((accuracy, copy.deepcopy(self.model.state_dict())))
        return accuracy

    x, y, x_dev, y_dev = overfitting(0)
    with monkeypatch.context() as patch:
        patch.setattr(TorchLogisticRegression, "score", recorded)
        fitted = TorchLogisticRegression(100, 2, 1e-3, CONFIGS["pytorch"]).fit(x, y, (x_dev, y_dev))
    accuracies = [accuracy for accuracy, _ in rounds]
    best = int(np.argmax(accuracies))
    assert len(rounds) == best + 5  # tenacity 3: four rounds without a better one
    assert accuracies[-1] < accuracies[best]
    for name, value in fitted.model.state_dict().items():
        assert (value == rounds[best][1][name]).all()
    assert fitted.score(x_dev, y_dev) == accuracies[best]


def test_the_pytorch_probe_settings_are_senteval_s_two_configs() -> None:
    """SentEval's README (facebookresearch/SentEval@5d6dc11, "classifier" parameters): prototyping
    {'optim': 'rmsprop', 'batch_size': 128, 'tenacity': 3, 'epoch_size': 2}, default {'optim': 'adam',
    'batch_size': 64, 'tenacity': 5, 'epoch_size': 4}; max_epoch 200 (classifier.py's default)."""
    from harness.evaluate.torch_probe import CONFIGS, TorchProbeConfig

    senteval = {
        "pytorch": TorchProbeConfig(optim="rmsprop", batch_size=128, tenacity=3, epoch_size=2, max_epoch=200),
        "pytorch_adam": TorchProbeConfig(
            optim="adam", batch_size=64, tenacity=5, epoch_size=4, max_epoch=200
        ),
    }
    assert senteval == CONFIGS


def test_max_epoch_counts_passes_not_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """SentEval's loop runs while nepoch <= max_epoch, each round adding epoch_size passes: with
    max_epoch 4 and epoch_size 2, rounds start at passes 0, 2 and 4 (three rounds, six passes), whatever
    the dev accuracy does (tenacity high enough never to stop it)."""
    from harness.evaluate.torch_probe import TorchLogisticRegression, TorchProbeConfig

    rounds = []
    train_round = TorchLogisticRegression._train_round

    def counted(self: TorchLogisticRegression, features: object, labels: object) -> None:
        rounds.append(1)
        train_round(self, features, labels)

    monkeypatch.setattr(TorchLogisticRegression, "_train_round", counted)
    x, y = separable(60, 2, 3)
    config = TorchProbeConfig(tenacity=100, epoch_size=2, max_epoch=4)
    TorchLogisticRegression(16, 2, 1e-4, config).fit(x, y, (x, y))
    assert len(rounds) == 3
