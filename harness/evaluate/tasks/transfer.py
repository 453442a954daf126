"""SentEval's transfer tasks (Conneau & Kiela, 2018): a logistic-regression probe on frozen embeddings,
accuracy x 100; `transfer.avg` is the mean over the eight.

Exactly as SentEval's scikit-learn path does it (Conneau and Kiela, 2018; facebookresearch/SentEval@5d6dc11
senteval/tools/validation.py and the task files), seed 1111:

- Order first. Each split is stably sorted by (number of whitespace tokens, label), MRPC by (tokens of A,
  tokens of B, label) (binary.py:40-41, trec.py:50-56, sst.py:64-66, mrpc.py:61-64); the folds below are
  drawn over that order, so it changes which sentences share a fold.
- `inner_kfold` (MR, CR, SUBJ, MPQA; validation.py:38-105): outer StratifiedKFold(k, shuffle=True,
  random_state=1111); inside each outer training part an inner one with the same random_state scores
  every C in {2^-2, ..., 2^3} as round(100 * mean inner accuracy, 2); the first best C is refit on the
  outer training part and scored on the outer test fold, round(100 * accuracy, 2). `devacc` / `acc` are
  round(mean over outer folds, 2).
- `kfold_then_test` (TREC, MRPC; :108-180): C in {2^-1, ..., 2^5} by the same rounded k-fold mean on train,
  one refit on all of train, round(100 * test accuracy, 2); MRPC also round(100 * F1, 2) of the paraphrase
  class (mrpc.py:100).
- `split` (SST2, SST5; :183-246): C in {2^-2, ..., 2^3} by round(100 * dev accuracy, 2), the model trained
  on train only scored on test.

The classifier is a `Probe`: by default SentEval's scikit-learn one below; `probe_for("pytorch")` gives its
PyTorch logistic regression (`usepytorch=True`, harness.evaluate.torch_probe), with SentEval's grid
10^-5..10^-2 for every protocol and early stopping on the fold / dev data (refits: a held-out 5%).

Every scikit-learn fit is `LogisticRegression(C=c, random_state=1111)`: the default solver (lbfgs) and
iteration limit (100), as SentEval constructs it, from scratch each time. On SST5 and TREC lbfgs stops at
the limit before converging (scikit-learn warns; the warning is silenced here), so another limit, or a
warm start from the previous C, gives other numbers: neither is used. MRPC features are
[|u - v|, u * v] computed in the embeddings' own dtype (`np.c_`, mrpc.py:83). k is 5 for the
`prototyping` preset (SentEval's default `kfold`) and 10 for `default`.

Given the task's name, each protocol also returns the task's per-item record under ITEMS
(harness.evaluate.registry): the predicted class of every scored item, in SentEval's order above, beside its
label; MR, CR, SUBJ, MPQA (`senteval_cv`): every item predicted by the refit of the outer fold that held it
out, with that fold's index; TREC, SST2, SST5 (`senteval_test`) and MRPC (`senteval_test_f1`): the test
items. The accuracies are computed from these same predictions (`mean(predicted == y)`: what
scikit-learn's `score`, `accuracy_score`, and the PyTorch probe's compute), so collecting them changes no
fit and no number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, SupportsFloat, cast

import numpy as np

from harness.choices import TRANSFER_FOLDS
from harness.data.lineage import cached_reader
from harness.data.transfer import BINARY_FILES, TRANSFER_TASKS, Labelled, read_transfer
from harness.evaluate.probe import SEED, Fitted, Probe
from harness.evaluate.probe_fits import ProbeFit, Refit
from harness.evaluate.registry import ITEMS, ScoreOptions, declare_aggregate, declare_suite, register_task
from harness.evaluate.tasks.geometry import GEOMETRY
from harness.evaluate.tasks.sts import STS_TEST
from harness.evaluate.torch_probe import CONFIGS

if TYPE_CHECKING:
    import pandas as pd
    from sklearn.model_selection import StratifiedKFold


PRESETS = TRANSFER_FOLDS

Embeddings = dict[str, np.ndarray]


def percent(fraction: SupportsFloat) -> float:
    """SentEval's reported form: round(100 * x, 2)."""
    return round(100 * float(fraction), 2)


SKLEARN = Probe()


def _folds(k: int) -> StratifiedKFold:
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(n_splits=k, shuffle=True, random_state=SEED)


def _grid_fits(rows: np.ndarray, y: np.ndarray, grid: list[float], k: int) -> list[ProbeFit]:
    """For each regularisation value, each of k stratified folds of `rows`: trained on the rest,
    scored (and early-stopped) on the fold."""
    folds = list(_folds(k).split(rows, y[rows]))
    return [ProbeFit(rows[tr], reg, rows[te]) for reg in grid for tr, te in folds]


def _best_reg(scores: list[float], grid: list[float], k: int) -> tuple[float, float]:
    """(the first regularisation with the best rounded mean k-fold accuracy, that score), from the
    accuracies of `_grid_fits`' fits in their order."""
    means = [percent(np.mean(scores[i * k : (i + 1) * k])) for i in range(len(grid))]
    best = int(np.argmax(means))
    return grid[best], means[best]


def _grid_then_refit(
    probe: Probe, table: np.ndarray, y: np.ndarray, parts: list[np.ndarray], grid: list[float], k: int
) -> tuple[list[tuple[float, float]], Fitted, list[int]]:
    """For each part (rows of `table`): the k-fold grid on it, its first best regularisation and that
    score, and the refit on the whole part with it, all in one call. Returns (per part (reg, score), the
    fits, which fit is each part's refit)."""
    grid_fits = [fit for rows in parts for fit in _grid_fits(rows, y, grid, k)]
    per_part = len(grid) * k

    def refit(rows: np.ndarray) -> Callable[[list[float]], ProbeFit]:
        return lambda scores: ProbeFit(rows, _best_reg(scores, grid, k)[0])

    refits = [Refit(range(i * per_part, (i + 1) * per_part), refit(rows)) for i, rows in enumerate(parts)]
    fitted = probe.fit_all(table, y, [*grid_fits, *refits])
    held = cast(list[np.ndarray], [f.validation for f in grid_fits])  # each grid fit's fold (`_grid_fits`)
    scores = fitted.score(range(len(grid_fits)), held, y)
    chosen = [_best_reg(scores[i * per_part : (i + 1) * per_part], grid, k) for i in range(len(parts))]
    return chosen, fitted, list(range(len(grid_fits), len(grid_fits) + len(parts)))


def _items(
    task: str | None, protocol: str, predicted: np.ndarray, y: np.ndarray, fold: np.ndarray | None = None
) -> dict[str, pd.DataFrame]:
    """{ITEMS: the task's record} (nothing without a task's name); item = position in SentEval's order,
    `fold` the outer fold that held a cross-validated item out; cross-validated items stored fold by fold,
    as SentEval scores them."""
    if task is None:
        return {}
    from harness.stats.items import item_rows  # pandas: only where a record is kept

    record = item_rows(task, protocol, predicted, y, fold=fold)
    if fold is not None:
        record = record.iloc[np.argsort(fold, kind="stable")].reset_index(drop=True)
    return {ITEMS: record}


def inner_kfold(
    x: np.ndarray, y: np.ndarray, k: int, probe: Probe = SKLEARN, task: str | None = None
) -> dict[str, Any]:
    """Every outer fold's inner grid and refit (`_grid_then_refit`), each refit scored on its fold."""
    outer = list(_folds(k).split(x, y))
    chosen, fitted, refit = _grid_then_refit(probe, x, y, [tr for tr, _ in outer], probe.grid("inner"), k)
    held_out = fitted.predict(refit, [te for _, te in outer])
    predicted, fold = np.zeros(len(y)), np.full(len(y), -1)  # out of fold: by the refit that held it out
    for i, ((_, te), guess) in enumerate(zip(outer, held_out, strict=True)):
        predicted[te], fold[te] = guess, i
    test = [percent(np.mean(guess == y[te])) for (_, te), guess in zip(outer, held_out, strict=True)]
    dev = [score for _, score in chosen]
    scores = {"acc": round(float(np.mean(test)), 2), "devacc": round(float(np.mean(dev)), 2), "n": len(y)}
    return {**scores, **_items(task, "senteval_cv", predicted, y, fold)}


def kfold_then_test(
    x: np.ndarray,
    y: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    k: int,
    f1: bool = False,
    probe: Probe = SKLEARN,
    task: str | None = None,
) -> dict[str, Any]:
    table, labels = np.concatenate([x, x_test]), np.concatenate([y, y_test])
    train, test = np.arange(len(x)), np.arange(len(x), len(table))
    [(_, dev_acc)], fitted, refit = _grid_then_refit(probe, table, labels, [train], probe.grid("kfold"), k)
    predicted = fitted.predict(refit, [test])[0]
    scores = {"acc": percent(np.mean(predicted == y_test)), "devacc": dev_acc, "n": len(y_test)}
    if f1:
        from sklearn.metrics import f1_score

        scores["f1"] = percent(f1_score(y_test, predicted))
    return {**scores, **_items(task, "senteval_test_f1" if f1 else "senteval_test", predicted, y_test)}


def split(
    x: np.ndarray,
    y: np.ndarray,
    x_dev: np.ndarray,
    y_dev: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    probe: Probe = SKLEARN,
    task: str | None = None,
) -> dict[str, Any]:
    table, labels = np.concatenate([x, x_dev, x_test]), np.concatenate([y, y_dev, y_test])
    train, dev = np.arange(len(x)), np.arange(len(x), len(x) + len(x_dev))
    test = np.arange(len(x) + len(x_dev), len(table))
    grid = probe.grid("split")
    fitted = probe.fit_all(table, labels, [ProbeFit(train, reg, dev) for reg in grid])
    dev_scores = [percent(a) for a in fitted.score(range(len(grid)), [dev] * len(grid), labels)]
    best = int(np.argmax(dev_scores))
    predicted = fitted.predict([best], [test])[0]  # the best model's `.score(x_test, y_test)`, below
    scores = {"acc": percent(np.mean(predicted == y_test)), "devacc": dev_scores[best], "n": len(y_test)}
    return {**scores, **_items(task, "senteval_test", predicted, y_test)}


def senteval_order(data: Labelled) -> Labelled:
    """The split stably sorted by (tokens, label), or (tokens of A, tokens of B, label) for pairs."""
    if data.second is None:
        keys: list[tuple[int, ...]] = [
            (len(t.split()), int(y)) for t, y in zip(data.texts, data.labels, strict=True)
        ]
    else:
        keys = [(len(a.split()), len(b.split()), int(y))
                for a, b, y in zip(data.texts, data.second, data.labels, strict=True)]  # fmt: skip
    order = sorted(range(len(keys)), key=keys.__getitem__)
    second = None if data.second is None else [data.second[i] for i in order]
    return Labelled([data.texts[i] for i in order], data.labels[order], second)


def features(data: Labelled, embeddings: Embeddings) -> np.ndarray:
    """Sentence embeddings, or [|u - v|, u * v] for sentence pairs, in the embeddings' dtype."""
    u = np.stack([embeddings[t] for t in data.texts])
    if data.second is None:
        return u
    v = np.stack([embeddings[t] for t in data.second])
    return np.concatenate([np.abs(u - v), u * v], axis=1)


def evaluate_transfer(
    task: str, splits: dict[str, Labelled], embeddings: Embeddings, k: int, probe: Probe = SKLEARN
) -> dict[str, Any]:
    """One transfer task's scores (`acc`, `devacc`, `n`, and `f1` for MRPC), each as SentEval reports it,
    and its per-item record under ITEMS (module docstring).

    scikit-learn's fits run on one BLAS thread (threadpoolctl). SentEval leaves the thread count to the
    machine, and OpenBLAS's threaded kernels sum in another order, which lbfgs (stopped at 100 iterations
    on several tasks) turns into other scores: on the same embeddings MRPC acc 57.45 with 2 threads, 57.39
    with 1. One thread makes a score independent of the machine's cores, and these small fits faster
    (bench/probe_threads.py)."""
    ordered = {name: senteval_order(part) for name, part in splits.items()}
    parts = {name: (features(part, embeddings), part.labels) for name, part in ordered.items()}
    with one_blas_thread() if probe.torch is None else contextlib.nullcontext():
        if task in BINARY_FILES:
            return inner_kfold(*parts["all"], k, probe, task)
        if task in ("SST2", "SST5"):
            return split(*parts["train"], *parts["dev"], *parts["test"], probe, task)
        return kfold_then_test(*parts["train"], *parts["test"], k, f1=task == "MRPC", probe=probe, task=task)


def one_blas_thread() -> contextlib.AbstractContextManager:
    """numpy's and scikit-learn's BLAS on one thread for the block."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def probe_for(classifier: str, device: str = "cpu") -> Probe:
    """`sklearn` (SentEval's `usepytorch=False`), `pytorch` (SentEval's PyTorch logistic regression with
    its prototyping settings, Liao's) or `pytorch_adam` (its default settings), the PyTorch ones on
    `device`."""
    return Probe(CONFIGS[classifier], device) if classifier != "sklearn" else SKLEARN


SPLITS = {"SST2": ("train", "dev", "test"), "SST5": ("train", "dev", "test"), "TREC": ("train", "test"),
          "MRPC": ("train", "test")}  # fmt: skip


@cached_reader(maxsize=16)
def _read(data_dir: Path, task: str) -> dict[str, Labelled]:
    return read_transfer(data_dir, task)


def _load(task: str, data_dir: Path, variant: str) -> dict[str, Labelled]:
    """A task's loader: every text variant reads the same files."""
    return _read(data_dir, task)


def labelled_sentences(splits: dict[str, Labelled]) -> Iterable[str]:
    return {s for part in splits.values() for s in part.sentences()}


def _scorer(task: str):  # noqa: ANN202
    def score(splits: dict[str, Labelled], embeddings: dict, options: ScoreOptions) -> dict[str, object]:
        probe = probe_for(options.classifier, options.device)
        return evaluate_transfer(task, splits, embeddings, PRESETS[options.preset], probe)

    return score


for _name in TRANSFER_TASKS:
    register_task(
        _name, kind="classification", sentences=labelled_sentences, scorer=_scorer(_name), main_score="acc",
        splits=SPLITS.get(_name, ("all",)), description=f"SentEval {_name}: logistic-regression accuracy",
        scores=("acc", "devacc", "f1") if _name == "MRPC" else ("acc", "devacc"),  # evaluate_transfer's
    )(partial(_load, _name))  # fmt: skip

declare_aggregate("transfer.avg", TRANSFER_TASKS, "acc", "mean accuracy of the eight transfer tasks")
declare_aggregate(
    "transfer.devavg",
    TRANSFER_TASKS,
    "devacc",
    "mean validation accuracy of the eight transfer tasks (no test item)",
)
declare_suite("transfer", TRANSFER_TASKS)
declare_suite("full", (*STS_TEST, *TRANSFER_TASKS, GEOMETRY))
