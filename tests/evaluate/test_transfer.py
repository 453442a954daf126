"""The SentEval protocols on synthetic data: separable sets reach 100%, shuffled labels stay near chance."""

from pathlib import Path

import numpy as np
import pytest

from harness.data.transfer import Labelled
from harness.evaluate.transfer import inner_kfold, kfold_then_test, senteval_order, split


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


@pytest.mark.slow
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


def noisy(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping classes, so the choice of C and the fold assignment change the scores."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return rng.normal(size=(n, 20)) + 0.4 * y[:, None] * rng.normal(size=20), y


def senteval_inner_kfold(x: np.ndarray, y: np.ndarray, k: int) -> tuple[float, float]:
    """SentEval@5d6dc11 validation.py:59-105 (InnerKFoldClassifier.run, scikit-learn path) re-written
    here as the reference: regs outer, inner folds inner, scores rounded before the argmax."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    regs = [2**t for t in range(-2, 4)]
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    inner = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    dev, test = [], []
    for tr, te in skf.split(x, y):
        scores = []
        for reg in regs:
            fold_scores = []
            for itr, ite in inner.split(x[tr], y[tr]):
                clf = LogisticRegression(C=reg, random_state=1111).fit(x[tr][itr], y[tr][itr])
                fold_scores.append(clf.score(x[tr][ite], y[tr][ite]))
            scores.append(round(100 * np.mean(fold_scores), 2))
        dev.append(np.max(scores))
        clf = LogisticRegression(C=regs[int(np.argmax(scores))], random_state=1111).fit(x[tr], y[tr])
        test.append(round(100 * clf.score(x[te], y[te]), 2))
    return round(np.mean(dev), 2), round(np.mean(test), 2)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_inner_kfold_equals_senteval_rounding_and_refit_rules() -> None:
    x, y = noisy(300, 7)
    dev, acc = senteval_inner_kfold(x, y, 5)
    scores = inner_kfold(x, y, 5)
    assert (scores["devacc"], scores["acc"]) == (dev, acc)


def test_senteval_order_sorts_stably_by_tokens_then_label() -> None:
    data = Labelled(["b b", "a", "c c", "d", "e e e"], np.array([1, 1, 0, 0, 1]))
    ordered = senteval_order(data)
    assert ordered.texts == ["d", "a", "c c", "b b", "e e e"]  # (1, 0), (1, 1), (2, 0), (2, 1), (3, 1)
    assert ordered.labels.tolist() == [0, 1, 0, 1, 1]
    pairs = Labelled(["x y", "x", "x"], np.array([0, 1, 0]), ["p", "p q", "p q"])
    ordered = senteval_order(pairs)  # (tokens of A, tokens of B, label)
    assert list(zip(ordered.texts, ordered.second, ordered.labels.tolist(), strict=True)) == [
        ("x", "p q", 0),
        ("x", "p q", 1),
        ("x y", "p", 0),
    ]


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


def test_senteval_pytorch_protocols_reach_100_on_separable_sets() -> None:
    from harness.evaluate.transfer import probe_for

    probe = probe_for("pytorch")
    x, y = separable(60, 2, 0)
    assert inner_kfold(x.astype(np.float32), y, 3, probe)["acc"] == pytest.approx(100.0)
    x3, y3 = separable(60, 3, 1)
    scores = split(x3.astype(np.float32), y3, x3.astype(np.float32), y3, x3.astype(np.float32), y3, probe)
    assert scores["acc"] == pytest.approx(100.0)


def test_the_pytorch_probe_is_fitted_where_the_encoder_runs(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate_tasks` hands the encoder's device (`encode_fn.device`) to SentEval's PyTorch classifier
    (SentEval fits it on CUDA): on a GPU worker, the GPU."""
    import torch

    from harness.evaluate.suite import evaluate_tasks
    from harness.evaluate.torch_probe import TorchLogisticRegression

    class Built(Exception):
        pass

    devices = []

    def record(self, n_features, n_classes, l2reg, config, device="cpu") -> None:  # noqa: ANN001
        devices.append(device)
        raise Built

    monkeypatch.setattr(TorchLogisticRegression, "__init__", record)

    class Encode:
        device = torch.device("cpu", 0)

        def __call__(self, sentences: list[str]) -> dict[str, np.ndarray]:
            return {s: np.random.RandomState(len(s)).rand(8).astype(np.float32) for s in sentences}

    with pytest.raises(Built):
        evaluate_tasks(Encode(), data_dir, ["TREC"], classifier="pytorch")
    assert devices == ["cpu:0"]


def labelled(task: str, split: str, n: int, classes: int, seed: int, pairs: bool = False) -> Labelled:
    """`n` sentences of 1-5 tokens (so SentEval's order moves them) with labels, pairs for MRPC."""
    texts = [f"{task}-{split}-{i}" + " w" * (i % 5) for i in range(n)]
    second = [f"{t} other" for t in texts] if pairs else None
    return Labelled(texts, np.random.default_rng(seed).integers(0, classes, n), second)


def noisy_embeddings(splits: dict[str, Labelled], seed: int) -> dict[str, np.ndarray]:
    """Each sentence near its label's centre, with noise: accuracies between chance and 100."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(6, 8))
    out = {}
    for part in splits.values():
        for i, text in enumerate(part.texts):
            out[text] = (centres[part.labels[i]] + 1.5 * rng.normal(size=8)).astype(np.float32)
            if part.second is not None:
                out[part.second[i]] = rng.normal(size=8).astype(np.float32)
    return out


SST_SPLITS = ("train", "dev", "test")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("classifier", ["sklearn", "pytorch"])
def test_the_item_record_gives_back_each_protocols_scores(classifier: str) -> None:
    """Every protocol's per-item record (harness.evaluate.transfer): MR's out-of-fold predictions, fold by
    fold (10 folds with scikit-learn, where a mean of rounded accuracies can fall on a rounding half),
    TREC's, MRPC's and SST5's test predictions, each with its label in SentEval's order; the rounded
    accuracies (and MRPC's F1) recomputed from the record alone are the scores, to the last bit."""
    from harness.evaluate.items import ITEMS
    from harness.evaluate.transfer import evaluate_transfer, probe_for
    from harness.stats.item_scores import point_scores

    k = 10 if classifier == "sklearn" else 3
    tasks = {
        "MR": {"all": labelled("MR", "all", 200, 2, 0)},
        "TREC": {"train": labelled("TREC", "train", 150, 6, 1), "test": labelled("TREC", "test", 60, 6, 2)},
        "MRPC": {"train": labelled("MRPC", "train", 150, 2, 3, True),
                 "test": labelled("MRPC", "test", 80, 2, 4, True)},
        "SST5": {split: labelled("SST5", split, 100, 5, seed) for seed, split in enumerate(SST_SPLITS, 5)},
    }  # fmt: skip
    protocols = {
        "MR": "senteval_cv",
        "TREC": "senteval_test",
        "MRPC": "senteval_test_f1",
        "SST5": "senteval_test",
    }
    for seed, (task, splits) in enumerate(tasks.items()):
        scores = evaluate_transfer(task, splits, noisy_embeddings(splits, seed), k, probe_for(classifier))
        record = scores[ITEMS]
        assert set(record.task) == {task} and set(record.protocol) == {protocols[task]}
        recomputed = point_scores(record)
        assert recomputed[f"{task}.acc"] == scores["acc"] and 0 < scores["acc"] < 100
        assert recomputed.get(f"{task}.f1") == scores.get("f1")
        scored = senteval_order(splits["all" if task == "MR" else "test"])
        by_item = record.sort_values("item")
        assert by_item.item.tolist() == list(range(len(scored)))
        np.testing.assert_array_equal(by_item.gold.to_numpy(), scored.labels)
        if task == "MR":  # each item once, out of fold, the folds in order
            assert record.fold.is_monotonic_increasing and set(record.fold) == set(range(k))
        else:
            assert set(record.fold) == {-1}
