"""The SentEval protocols on synthetic data: separable sets reach 100%, shuffled labels stay near chance;
the grids, the first-best choice, the seeded folds, the sort and MRPC's features and F1 pinned against
facebookresearch/SentEval@5d6dc11, re-implemented here where a number depends on them; the PyTorch
probe itself: test_torch_probe.py."""

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from harness.data.transfer import Labelled
from harness.evaluate.probe import Probe
from harness.evaluate.probe_fits import ProbeFit
from harness.evaluate.tasks.transfer import inner_kfold, kfold_then_test, senteval_order, split
from tests.evaluate.probe_data import noisy, one_thread, separable  # noqa: F401 - one_thread: autouse


@pytest.mark.slow
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
    """Labels drawn independently of 64-dimensional features (balanced: the majority rate is 50%): every
    protocol's held-out accuracy, its cross-validated dev accuracy and MRPC's F1 stay within 7.5 points
    of 50, three binomial standard errors at n = 400 (3 * sqrt(0.25 / 400) = 0.075); F1 within 10 (its
    spread is a little wider). A protocol that scored the probe on the data it was fitted on would exceed
    it (the same data scored on its own fit: 63%, asserted as the control), and a probe predicting one
    class throughout would give F1 0 or 66.7."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(400, 64)), rng.permutation(np.arange(400) % 2)
    x_test, y_test = rng.normal(size=(400, 64)), rng.permutation(np.arange(400) % 2)
    cv = inner_kfold(x, y, 5)
    scores = kfold_then_test(x, y, x_test, y_test, 5, f1=True)
    on_its_own_training_data = 100 * LogisticRegression(C=8.0).fit(x, y).score(x, y)
    for value in (cv["acc"], cv["devacc"], scores["acc"], scores["devacc"]):
        assert abs(value - 50.0) <= 7.5
    assert abs(scores["f1"] - 50.0) <= 10.0
    assert on_its_own_training_data > 57.5  # the bound tells a leaking protocol from an honest one


def test_f1_is_of_the_positive_class() -> None:
    x, y = separable(100, 2, 6)
    scores = kfold_then_test(x, y, x, y, 5, f1=True)
    assert scores["f1"] == pytest.approx(100.0)


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


@pytest.mark.slow
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


def test_senteval_pytorch_protocols_reach_100_on_separable_sets() -> None:
    from harness.evaluate.tasks.transfer import probe_for

    probe = probe_for("pytorch")
    x, y = separable(60, 2, 0)
    assert inner_kfold(x.astype(np.float32), y, 3, probe)["acc"] == pytest.approx(100.0)
    x3, y3 = separable(60, 3, 1)
    scores = split(x3.astype(np.float32), y3, x3.astype(np.float32), y3, x3.astype(np.float32), y3, probe)
    assert scores["acc"] == pytest.approx(100.0)


@pytest.mark.slow
def test_the_pytorch_probe_is_fitted_where_the_encoder_runs(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evaluate_tasks` hands the encoder's device (`encode_fn.device`) to SentEval's PyTorch classifier
    (SentEval fits it on CUDA): on a GPU worker, the GPU."""
    import torch

    from harness.evaluate import batched_probe
    from harness.evaluate.suite import evaluate_tasks

    class Built(Exception):
        pass

    devices = []

    def record(table, labels, fits, classes, config, device) -> None:  # noqa: ANN001
        devices.append(device)
        raise Built

    monkeypatch.setattr(batched_probe, "fit_together", record)

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


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("classifier", ["sklearn", "pytorch"])
def test_the_item_record_gives_back_each_protocols_scores(classifier: str) -> None:
    """Every protocol's per-item record (evaluate.tasks.transfer): MR's out-of-fold predictions, fold by
    fold (10 folds with scikit-learn, where a mean of rounded accuracies can fall on a rounding half),
    TREC's, MRPC's and SST5's test predictions, each with its label in SentEval's order; the rounded
    accuracies (and MRPC's F1) recomputed from the record alone are the scores, to the last bit."""
    from harness.evaluate.registry import ITEMS
    from harness.evaluate.tasks.transfer import evaluate_transfer, probe_for
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


def test_mrpc_features_are_the_absolute_difference_and_the_product() -> None:
    """MRPC's pair features [|u - v|, u * v] in the embeddings' dtype (SentEval@5d6dc11 mrpc.py:83,
    `np.c_[np.abs(trainA - trainB), trainA * trainB]`); single sentences: their embeddings as they are."""
    from harness.evaluate.tasks.transfer import features

    embeddings = {
        "a": np.array([1.0, 2.0, -1.0], np.float32),
        "b": np.array([3.0, 1.0, 2.0], np.float32),
        "c": np.array([0.5, -4.0, 0.0], np.float32),
    }
    pairs = features(Labelled(["a", "c"], np.array([1, 0]), ["b", "a"]), embeddings)
    expected = [[2.0, 1.0, 3.0, 3.0, 2.0, -2.0], [0.5, 6.0, 1.0, 0.5, -8.0, -0.0]]
    np.testing.assert_array_equal(pairs, np.array(expected, np.float32))
    assert pairs.dtype == np.float32
    single = features(Labelled(["b", "a"], np.array([1, 0])), embeddings)
    np.testing.assert_array_equal(single, np.stack([embeddings["b"], embeddings["a"]]))


@pytest.mark.slow
def test_the_presets_are_senteval_fold_counts_and_the_scorer_uses_them() -> None:
    """`prototyping` is 5 folds, SentEval's default `kfold` (SentEval@5d6dc11 senteval/engine.py:35,
    `params.kfold = 5 if 'kfold' not in params`; README.md:201, the prototyping config `'kfold': 5`);
    `default` is 10 (README.md:209, the default config `'kfold': 10`). The registered MR scorer, given
    each preset, cross-validates over that many outer folds (its item record's fold column)."""
    from harness.choices import TRANSFER_FOLDS
    from harness.evaluate.registry import ITEMS, ScoreOptions, get_task
    from harness.evaluate.tasks.transfer import PRESETS

    assert TRANSFER_FOLDS == {"prototyping": 5, "default": 10}
    assert PRESETS == {"prototyping": 5, "default": 10}
    splits = {"all": labelled("MR", "all", 60, 2, 0)}
    embeddings = noisy_embeddings(splits, 0)
    for preset, k in (("prototyping", 5), ("default", 10)):
        scores = get_task("MR").score(splits, embeddings, ScoreOptions(preset=preset))
        assert sorted(set(scores[ITEMS].fold)) == list(range(k))


# SentEval@5d6dc11 senteval/tools/validation.py: the scikit-learn C grids, `[2**t for t in range(-2, 4, 1)]`
# (InnerKFoldClassifier, :62), `[2**t for t in range(-1, 6, 1)]` (KFoldClassifier, :131),
# `[2**t for t in range(-2, 4, 1)]` (SplitClassifier, :206); the PyTorch L2 grid
# `[10**t for t in range(-5, -1)]` (:61, :130, :205).
SENTEVAL_INNER = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
SENTEVAL_KFOLD = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
SENTEVAL_SPLIT = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0]
SENTEVAL_TORCH = [1e-5, 1e-4, 1e-3, 1e-2]


def test_the_regularisation_grids_are_senteval_s() -> None:
    """The grids, exactly (SentEval@5d6dc11 validation.py:61-62, :130-131, :205-206), and which one each
    protocol gets: scikit-learn's per protocol, PyTorch's 10^-5..10^-2 for all three."""
    from harness.evaluate.probe import INNER_GRID, KFOLD_GRID, SPLIT_GRID, TORCH_GRID, Probe
    from harness.evaluate.torch_probe import CONFIGS

    assert INNER_GRID == SENTEVAL_INNER == [2**t for t in range(-2, 4, 1)]
    assert KFOLD_GRID == SENTEVAL_KFOLD == [2**t for t in range(-1, 6, 1)]
    assert SPLIT_GRID == SENTEVAL_SPLIT == [2**t for t in range(-2, 4, 1)]
    assert TORCH_GRID == SENTEVAL_TORCH == [10**t for t in range(-5, -1)]
    grids = {"inner": SENTEVAL_INNER, "kfold": SENTEVAL_KFOLD, "split": SENTEVAL_SPLIT}
    for protocol, grid in grids.items():
        assert Probe().grid(protocol) == grid
        assert Probe(CONFIGS["pytorch"]).grid(protocol) == SENTEVAL_TORCH


class ScriptedModel:
    """A fitted stand-in whose accuracy on any data is the one scripted for its regularisation."""

    def __init__(self, reg: float, accuracy: float, calls: list) -> None:
        self.reg, self.accuracy, self.calls = reg, accuracy, calls

    def score(self, x: np.ndarray, y: np.ndarray) -> float:
        return self.accuracy

    def predict(self, x: np.ndarray) -> np.ndarray:
        self.calls.append(("predict", self.reg))
        return np.zeros(len(x), int)


@dataclass(frozen=True)
class Scripted(Probe):
    """A probe that fits nothing, one fit at a time: each fit is recorded (reg, validation rows given)
    and returns a model scoring `accuracy[reg]` (a reg outside the script: KeyError)."""

    accuracy: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)
    together: bool = False

    def fit_one(self, table: np.ndarray, labels: np.ndarray, fit: ProbeFit) -> ScriptedModel:
        self.calls.append(("fit", fit.reg, fit.validation is not None))
        return ScriptedModel(fit.reg, self.accuracy[fit.reg], self.calls)


# Scripted accuracies along a grid: grid[1] and grid[3] tie once rounded to SentEval's two decimals of a
# percent (70.0), grid[3] is higher before rounding, grid[5] ties with both, grid[4] is the worst. SentEval
# picks `regs[np.argmax(scores)]` over the rounded scores: grid[1] (the first best); an argmax over the
# unrounded accuracies would pick grid[3], the last best grid[5] (or grid[3] on the four-long grid).
SCRIPT = [0.5, 0.70001, 0.6, 0.70004, 0.2, 0.70004, 0.3]


@pytest.mark.parametrize("classifier", ["sklearn", "pytorch"])
def test_each_protocol_scans_its_grid_and_keeps_the_first_best(classifier: str) -> None:
    """What the protocols do with the grids (SentEval@5d6dc11 validation.py): `inner_kfold` (:71-101) fits
    every C of its grid on each of k inner folds of every outer training part, then refits the first
    best C (rounded scores, `np.argmax`) on that part, without validation data, and predicts the outer
    fold with it; `kfold_then_test` (:135-177) fits each C on k folds, refits the first best on all of
    train; `split` (:210-233) fits each C once on train, scored on dev, and predicts test with the first
    best's model. The dev accuracy is the best rounded score. PyTorch: the same with its own grid. The
    fits of a call are listed first and made in one `fit_all` (every outer part's grid, then every
    refit), so the calls come in that order."""
    from harness.evaluate.torch_probe import CONFIGS

    torch_config = CONFIGS["pytorch"] if classifier == "pytorch" else None
    grids = {p: SENTEVAL_TORCH if torch_config else g for p, g in
             (("inner", SENTEVAL_INNER), ("kfold", SENTEVAL_KFOLD), ("split", SENTEVAL_SPLIT))}  # fmt: skip
    script = [0.5, 0.70001, 0.70004, 0.70004] if torch_config else SCRIPT
    x, y = noisy(60, 0)
    k = 3

    def probe(grid: list[float]) -> Scripted:
        return Scripted(torch_config, accuracy=dict(zip(grid, script, strict=False)))

    inner = probe(grids["inner"])
    assert inner_kfold(x, y, k, inner)["devacc"] == 70.0
    scan = [("fit", reg, True) for reg in grids["inner"] for _ in range(k)]
    refit, predict = ("fit", grids["inner"][1], False), ("predict", grids["inner"][1])
    assert inner.calls == scan * k + [refit] * k + [predict] * k

    kfold = probe(grids["kfold"])
    assert kfold_then_test(x, y, x, y, k, probe=kfold)["devacc"] == 70.0
    scan = [("fit", reg, True) for reg in grids["kfold"] for _ in range(k)]
    assert kfold.calls == [*scan, ("fit", grids["kfold"][1], False), ("predict", grids["kfold"][1])]

    held_out = probe(grids["split"])
    assert split(x, y, x, y, x, y, held_out)["devacc"] == 70.0
    assert held_out.calls == [*[("fit", reg, True) for reg in grids["split"]], ("predict", grids["split"][1])]


@dataclass(frozen=True)
class Recording(Probe):
    """SentEval's scikit-learn probe, each fit's (reg, x, y, validation x) recorded."""

    calls: list = field(default_factory=list)

    def fit_one(self, table: np.ndarray, labels: np.ndarray, fit: ProbeFit) -> object:
        held = None if fit.validation is None else table[fit.validation]
        self.calls.append((fit.reg, table[fit.train], labels[fit.train], held))
        return super().fit_one(table, labels, fit)


def senteval_kfold_then_test(
    x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, k: int
) -> tuple[float, float, np.ndarray]:
    """SentEval@5d6dc11 validation.py:126-180 (KFoldClassifier.run, scikit-learn path) re-written here as
    the reference: (devacc, acc, yhat)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    regs = [2**t for t in range(-1, 6, 1)]
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    scores = []
    for reg in regs:
        scan = []
        for tr, te in skf.split(x, y):
            clf = LogisticRegression(C=reg, random_state=1111).fit(x[tr], y[tr])
            scan.append(clf.score(x[te], y[te]))
        scores.append(round(100 * np.mean(scan), 2))
    clf = LogisticRegression(C=regs[int(np.argmax(scores))], random_state=1111).fit(x, y)
    return float(np.max(scores)), round(100 * clf.score(x_test, y_test), 2), clf.predict(x_test)


def test_the_folds_are_senteval_s_seeded_stratified_folds() -> None:
    """Seed 1111 (SentEval@5d6dc11 engine.py:31 `params.seed = 1111`; validation.py:63-65 the inner
    protocol's `StratifiedKFold(n_splits=self.k, shuffle=True, random_state=1111)`, :132-133 the k-fold
    one's with `random_state=self.seed`): the rows every fit gets are those folds, outer and inner."""
    from sklearn.model_selection import StratifiedKFold

    x, y = noisy(60, 1)
    k = 3
    folds = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=1111).split(x, y))
    assert [te.tolist() for _, te in folds] != [te.tolist() for _, te in StratifiedKFold(k).split(x, y)]

    probe = Recording()
    kfold_then_test(x, y, x, y, k, probe=probe)
    for i, (reg, fit_x, fit_y, validation) in enumerate(probe.calls[:-1]):
        tr, te = folds[i % k]
        assert reg == SENTEVAL_KFOLD[i // k]
        np.testing.assert_array_equal(fit_x, x[tr])
        np.testing.assert_array_equal(fit_y, y[tr])
        np.testing.assert_array_equal(validation, x[te])

    probe = Recording()
    inner_kfold(x, y, k, probe)
    per_outer = len(SENTEVAL_INNER) * k
    assert len(probe.calls) == k * per_outer + k  # every outer part's grid, then its refits
    for outer, (tr, _) in enumerate(folds):
        calls = probe.calls[outer * per_outer : (outer + 1) * per_outer]
        inner = list(StratifiedKFold(n_splits=k, shuffle=True, random_state=1111).split(x[tr], y[tr]))
        for i, (_, fit_x, _, validation) in enumerate(calls):
            itr, ite = inner[i % k]
            np.testing.assert_array_equal(fit_x, x[tr][itr])
            np.testing.assert_array_equal(validation, x[tr][ite])
        refit = probe.calls[k * per_outer + outer]
        np.testing.assert_array_equal(refit[1], x[tr])  # the refit: the whole outer training part


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_kfold_then_test_and_its_f1_equal_senteval_s() -> None:
    """TREC / MRPC's protocol against the scikit-learn re-implementation above (validation.py:126-180):
    dev accuracy, test accuracy and each test prediction, exactly. MRPC's F1 is scikit-learn's
    `f1_score(testY, yhat)` (SentEval@5d6dc11 mrpc.py:100), the F1 of the paraphrase class (label 1),
    here `2 tp / (2 tp + fp + fn)` from the item record's predictions; on these overlapping, unbalanced
    classes the macro F1 and the F1 of class 0 are other numbers."""
    from sklearn.metrics import f1_score

    from harness.evaluate.registry import ITEMS
    from harness.evaluate.tasks.transfer import percent

    rng = np.random.default_rng(11)
    y_all = (rng.random(300) < 0.65).astype(int)  # MRPC: about two thirds paraphrases
    x_all = rng.normal(size=(300, 12)) + 0.5 * y_all[:, None] * rng.normal(size=12)
    x, y, x_test, y_test = x_all[:200], y_all[:200], x_all[200:], y_all[200:]
    dev, acc, yhat = senteval_kfold_then_test(x, y, x_test, y_test, 5)
    scores = kfold_then_test(x, y, x_test, y_test, 5, f1=True, task="MRPC")
    assert (scores["devacc"], scores["acc"]) == (dev, acc) and 50 < acc < 95
    record = scores[ITEMS].sort_values("item")
    predicted, gold = record.prediction.to_numpy().astype(int), record.gold.to_numpy().astype(int)
    np.testing.assert_array_equal(predicted, yhat)
    np.testing.assert_array_equal(gold, y_test)
    tp = int(np.sum((predicted == 1) & (gold == 1)))
    fp, fn = int(np.sum((predicted == 1) & (gold == 0))), int(np.sum((predicted == 0) & (gold == 1)))
    assert scores["f1"] == percent(2 * tp / (2 * tp + fp + fn)) == percent(f1_score(gold, predicted))
    assert scores["f1"] != percent(f1_score(gold, predicted, average="macro"))
    assert scores["f1"] != percent(f1_score(gold, predicted, pos_label=0))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_split_equals_senteval_s() -> None:
    """SST's protocol (SentEval@5d6dc11 validation.py:203-246, scikit-learn path): each C of 2^-2..2^3
    fitted on train, scored on dev rounded to two decimals of a percent, the first best one's test
    accuracy; re-written here with scikit-learn."""
    from sklearn.linear_model import LogisticRegression

    x, y = noisy(240, 12)
    parts = (x[:120], y[:120], x[120:180], y[120:180], x[180:], y[180:])
    clfs = [LogisticRegression(C=reg, random_state=1111).fit(x[:120], y[:120]) for reg in SENTEVAL_SPLIT]
    dev = [round(100 * clf.score(x[120:180], y[120:180]), 2) for clf in clfs]
    acc = round(100 * clfs[int(np.argmax(dev))].score(x[180:], y[180:]), 2)
    assert len(set(dev)) > 1
    assert split(*parts)["devacc"] == max(dev) and split(*parts)["acc"] == acc


def test_senteval_order_counts_whitespace_tokens_keeps_ties_and_sorts_pairs_by_both_sides() -> None:
    """SentEval's sort (SentEval@5d6dc11 binary.py:40-41 `sorted(zip(self.samples, self.labels), key=lambda
    z: (len(z[0]), z[1]))`, the samples `line.split()` token lists, :35; mrpc.py:61-64 `key=lambda z:
    (len(z[0]), len(z[1]), z[2])` over `text[3].split()`, `text[4].split()`, :45-46): Python's stable
    sort by (number of whitespace tokens, label), pairs by (tokens of A, tokens of B, label). Here the
    order by characters, by tokens alone, by A alone, or an unstable sort would each be another."""
    texts = ["a b", "ccccc", "d", "e f", "g h i", "j k"]
    ordered = senteval_order(Labelled(texts, np.array([1, 1, 0, 0, 0, 1])))
    # keys (2, 1), (1, 1), (1, 0), (2, 0), (3, 0), (2, 1): "a b" and "j k" tie and keep their order
    assert ordered.texts == ["d", "ccccc", "e f", "a b", "j k", "g h i"]
    assert ordered.labels.tolist() == [0, 1, 0, 1, 1, 0]
    assert ordered.second is None
    a = ["p q", "r", "s", "t", "uuuuuu"]
    b = ["x", "x y z", "x y", "x y", "x"]
    ordered = senteval_order(Labelled(a, np.array([0, 1, 1, 0, 1]), b))
    # keys (2, 1, 0), (1, 3, 1), (1, 2, 1), (1, 2, 0), (1, 1, 1)
    assert list(zip(ordered.texts, ordered.second, ordered.labels.tolist(), strict=True)) == [
        ("uuuuuu", "x", 1),
        ("t", "x y", 0),
        ("s", "x y", 1),
        ("r", "x y z", 1),
        ("p q", "x", 0),
    ]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_evaluate_transfer_scores_the_items_in_senteval_order() -> None:
    """`evaluate_transfer` sorts every split before it builds features (SentEval sorts before it embeds,
    binary.py:40-41, mrpc.py:61-64, and draws its folds over that order): MR's item record lists the
    labels in the order (tokens, label), MRPC's test items in (tokens of A, tokens of B, label), the order
    computed here independently; the scores are those of the protocol run on the features in that order,
    and MR's differ from the unsorted order's (its folds hold other sentences)."""
    from harness.evaluate.registry import ITEMS
    from harness.evaluate.tasks.transfer import evaluate_transfer

    mr = {"all": labelled("MR", "all", 100, 2, 0)}
    embeddings = noisy_embeddings(mr, 0)
    data = mr["all"]
    order = sorted(range(len(data)), key=lambda i: (len(data.texts[i].split()), data.labels[i]))
    assert order != list(range(len(data)))
    x = np.stack([embeddings[t] for t in data.texts])
    scores = evaluate_transfer("MR", mr, embeddings, 5)
    record = scores[ITEMS].sort_values("item")
    np.testing.assert_array_equal(record.gold.to_numpy(), data.labels[order])
    expected = inner_kfold(x[order], data.labels[order], 5)
    assert (scores["acc"], scores["devacc"]) == (expected["acc"], expected["devacc"])
    unsorted = inner_kfold(x, data.labels, 5)
    assert (unsorted["acc"], unsorted["devacc"]) != (expected["acc"], expected["devacc"])

    train, test = labelled("MRPC", "train", 80, 2, 3, True), labelled("MRPC", "test", 40, 2, 4, True)
    second = [" ".join(["w"] * (1 + i % 3)) + f" {i}" for i in range(40)]  # B: 2-4 tokens, apart from A's
    mrpc = {"train": train, "test": Labelled(test.texts, test.labels, second)}
    tokens = [(len(a.split()), len(b.split())) for a, b in zip(test.texts, second, strict=True)]
    order = sorted(range(len(test)), key=lambda i: (*tokens[i], test.labels[i]))
    record = evaluate_transfer("MRPC", mrpc, noisy_embeddings(mrpc, 3), 5)[ITEMS].sort_values("item")
    np.testing.assert_array_equal(record.gold.to_numpy(), test.labels[order])
