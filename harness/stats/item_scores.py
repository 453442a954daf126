"""Scores recomputed from a per-item record (harness.stats.items) under resampling weights, named as the
run logs them (`STS12.spearman_wmean`, `MR.acc`, `dev.CoLA.mcc`, `dev.overall`), each exactly as the
score is defined where it is first computed:

- `sts` (harness.evaluate.tasks.sts): per subset Spearman / Pearson x 100 of cosine vs gold; `spearman` /
  `pearson` over the pooled subsets (`all`), `spearman_mean` their plain mean, `spearman_wmean` their
  mean weighted by the subsets' sizes (SentEval's);
- `senteval_cv` (harness.evaluate.tasks.transfer.inner_kfold): round(mean over outer folds of
  round(100 * fold accuracy, 2), 2), each item scored out of fold;
- `senteval_test`, `senteval_test_f1` (kfold_then_test, split): round(100 * accuracy, 2), and for MRPC
  round(100 * F1 of class 1, 2);
- `glue` (harness.scoring.glue): the task's GLUE metrics x 100, as `dev.<task>.<metric>`;
- `cs224n` (harness.evaluate.cs224n_scores): SST-5 and Quora accuracy, STS Pearson r as fractions, and with
  all three Chen's `overall` and David et al.'s `overall_r01`;
- the task registry's aggregates (`STS.avg`, `STS12-16.wmean`, `transfer.avg`): the mean of their
  members' resampled scores, as the aggregate is defined.

Resampling is stratified: each STS subset, each outer fold of a cross-validated task, each other task is
a stratum of its own (`stratum` names it, with a checksum of its gold values), resampled within itself,
so a resample keeps every subset's and fold's size, as the score's definition needs (`wmean` weighs by
the original sizes)."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable, Iterable

import numpy as np
import pandas as pd

from harness.stats import weighted

CountsFor = Callable[[str, int], np.ndarray]  # (stratum, n items) -> weights [resamples, n]
Scores = dict[str, np.ndarray]
Wanted = set[str] | None  # the task-level scores to compute (None: all)


def stratum(task: str, subset: str, fold: int, gold: np.ndarray) -> str:
    """The name a stratum's resamples are drawn under: equal names get equal draws (paired). It ends in
    a checksum of the gold values in item order, so two runs pair only on the same items in the same
    order; other items (another data version, k = 5 against k = 10 folds) are drawn apart (unpaired)."""
    checksum = zlib.crc32(np.ascontiguousarray(gold, dtype=np.float64).tobytes())
    return f"{task}/{subset}" + (f"/fold{fold}" if fold >= 0 else "") + f"#{checksum:08x}"


def percent(fractions: np.ndarray) -> np.ndarray:
    """SentEval's round(100 * x, 2) per value (harness.evaluate.tasks.transfer.percent: Python's rounding,
    which differs from numpy's at some halves)."""
    from harness.evaluate.tasks.transfer import percent as reported

    return np.array([reported(v) for v in fractions])


def _strata(
    frame: pd.DataFrame, counts: CountsFor, by: str, ordered: bool = False
) -> list[tuple[pd.DataFrame, np.ndarray]]:
    """The frame's strata by `by` (first-seen order, or sorted with `ordered`), each with its weights."""
    parts = []
    for _, part in frame.groupby(by, sort=ordered):
        first = part.iloc[0]
        name = stratum(first.task, first.subset, int(first.fold), part.gold.to_numpy())
        parts.append((part, counts(name, len(part))))
    return parts


def sts(task: str, frame: pd.DataFrame, counts: CountsFor, wanted: Wanted = None) -> Scores:
    def asked(score: str) -> bool:
        return wanted is None or f"{task}.{score}" in wanted

    parts = _strata(frame, counts, "subset")
    scores: Scores = {}
    if asked("spearman_mean") or asked("spearman_wmean"):
        spearmans = np.stack([100 * weighted.spearman(w, p.prediction.to_numpy(), p.gold.to_numpy())
                              for p, w in parts])  # fmt: skip
        sizes = np.array([len(p) for p, _ in parts], dtype=np.float64)
        scores[f"{task}.spearman_mean"] = spearmans.mean(axis=0)
        scores[f"{task}.spearman_wmean"] = (spearmans * sizes[:, None]).sum(axis=0) / sizes.sum()
    if asked("spearman") or asked("pearson"):  # `all`: one correlation over the pooled subsets
        pooled = np.concatenate([w for _, w in parts], axis=1)
        prediction = np.concatenate([p.prediction.to_numpy() for p, _ in parts])
        gold = np.concatenate([p.gold.to_numpy() for p, _ in parts])
        if asked("spearman"):
            scores[f"{task}.spearman"] = 100 * weighted.spearman(pooled, prediction, gold)
        if asked("pearson"):
            scores[f"{task}.pearson"] = 100 * weighted.pearson(pooled, prediction, gold)
    return scores


def senteval_cv(task: str, frame: pd.DataFrame, counts: CountsFor, wanted: Wanted = None) -> Scores:
    folds = [
        percent(weighted.accuracy(w, (p.prediction == p.gold).to_numpy()))
        for p, w in _strata(frame, counts, "fold", ordered=True)
    ]  # fold 0 first, as SentEval sums
    # per resample, the mean of a contiguous row of k fold scores: numpy's pairwise sum for k >= 8, as
    # inner_kfold's np.mean of its list (a mean down the columns would add in another order)
    means = np.mean(np.ascontiguousarray(np.array(folds).T), axis=1)
    return {f"{task}.acc": np.array([round(float(v), 2) for v in means])}


def senteval_test(
    task: str, frame: pd.DataFrame, counts: CountsFor, wanted: Wanted = None, f1: bool = False
) -> Scores:
    ((part, w),) = _strata(frame, counts, "subset")
    predicted, gold = part.prediction.to_numpy(), part.gold.to_numpy()
    scores = {f"{task}.acc": percent(weighted.accuracy(w, predicted == gold))}
    if f1:
        scores[f"{task}.f1"] = percent(weighted.f1(w, predicted, gold))
    return scores


def glue(task: str, frame: pd.DataFrame, counts: CountsFor, wanted: Wanted = None) -> Scores:
    from harness.data.glue import glue_task

    ((part, w),) = _strata(frame, counts, "subset")
    predicted, gold = part.prediction.to_numpy(), part.gold.to_numpy()
    metric = {
        "acc": lambda: weighted.accuracy(w, predicted == gold),
        "f1": lambda: weighted.f1(w, predicted, gold),
        "mcc": lambda: weighted.mcc(w, predicted, gold),
        "pearson": lambda: weighted.pearson(w, predicted, gold),
        "spearman": lambda: weighted.spearman(w, predicted, gold),
    }
    return {f"dev.{task}.{name}": 100 * metric[name]() for name in glue_task(task).metrics}


CS224N_SCORES = {"sst": "acc", "quora": "acc", "sts": "pearson"}


def cs224n(task: str, frame: pd.DataFrame, counts: CountsFor, wanted: Wanted = None) -> Scores:
    ((part, w),) = _strata(frame, counts, "subset")
    predicted, gold = part.prediction.to_numpy(), part.gold.to_numpy()
    if CS224N_SCORES[task] == "pearson":
        return {f"dev.{task}.pearson": weighted.pearson(w, predicted, gold)}
    return {f"dev.{task}.acc": weighted.accuracy(w, predicted == gold)}


PROTOCOLS: dict[str, Callable[..., Scores]] = {
    "sts": sts,
    "senteval_cv": senteval_cv,
    "senteval_test": senteval_test,
    "senteval_test_f1": functools.partial(senteval_test, f1=True),
    "glue": glue,
    "cs224n": cs224n,
}


def _aggregates(scores: Scores) -> Scores:
    """The registry's aggregates whose members are all scored, and the CS224N overalls."""
    from harness.evaluate.registry import aggregates

    out = {}
    for name, aggregate in aggregates().items():
        members = [f"{task}.{aggregate.score}" for task in aggregate.members]
        if all(m in scores for m in members):
            out[name] = np.mean([scores[m] for m in members], axis=0)
    if all(f"dev.{t}.{s}" in scores for t, s in CS224N_SCORES.items()):
        accuracy = scores["dev.sst.acc"] + scores["dev.quora.acc"]
        out["dev.overall"] = (accuracy + scores["dev.sts.pearson"]) / 3
        out["dev.overall_r01"] = (accuracy + (scores["dev.sts.pearson"] + 1) / 2) / 3
    return out


def task_metrics(metrics: Iterable[str]) -> set[str]:
    """The task-level scores `metrics` (harness names) are computed from: an aggregate's members' scores,
    the CS224N overalls' three scores, any other metric itself."""
    from harness.evaluate.registry import aggregates

    declared = aggregates()
    wanted: set[str] = set()
    for metric in metrics:
        if metric in declared:
            wanted.update(f"{task}.{declared[metric].score}" for task in declared[metric].members)
        elif metric in ("dev.overall", "dev.overall_r01"):
            wanted.update(f"dev.{task}.{score}" for task, score in CS224N_SCORES.items())
        else:
            wanted.add(metric)
    return wanted


def _task_of(metric: str) -> str:
    return metric.removeprefix("dev.").rsplit(".", 1)[0]


def item_scores(record: pd.DataFrame, counts: CountsFor, metrics: Iterable[str] | None = None) -> Scores:
    """Every score of the record's tasks (or only what `metrics` need) under the weights `counts` gives
    each stratum, plus the aggregates; a value per row of weights."""
    wanted = None if metrics is None else task_metrics(metrics)
    tasks = list(dict.fromkeys(record.task))
    if wanted is not None:
        tasks = [task for task in tasks if task in {_task_of(m) for m in wanted}]
    scores: Scores = {}
    for task in tasks:
        frame = record[record.task == task]
        protocol = PROTOCOLS.get(str(frame.protocol.iloc[0]))
        if protocol is not None:  # a record from a newer harness: its unknown protocols are not scored
            scores.update(protocol(task, frame, counts, wanted))
    return {**scores, **_aggregates(scores)}


def point_scores(record: pd.DataFrame, metrics: Iterable[str] | None = None) -> dict[str, float]:
    """The scores of the record itself (every weight 1): equal to the run's logged scores."""
    scores = item_scores(record, lambda name, n: np.ones((1, n)), metrics)
    return {name: float(values[0]) for name, values in scores.items()}
