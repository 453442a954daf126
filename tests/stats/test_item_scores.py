"""Scores from an item record: equal to the score's definition on the items themselves, resampled within
strata, and two levels (seeds, then items) for rows with several seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from harness.stats.compare import interval
from harness.stats.item_scores import item_scores, point_scores, stratum
from harness.stats.items import concat_items, item_rows, read_items, write_items
from harness.stats.resample import Resampler, resampled_scores
from tests.stats.records import sts_record

YEARS = {"STS12": [120, 80, 40], "STS13": [60, 90], "STS14": [70], "STS15": [50, 50], "STS16": [30, 45]}


def _sts_record() -> pd.DataFrame:
    return sts_record(YEARS, noise=1.0, seed=1)


def test_sts_aggregates_equal_their_definition_on_the_unresampled_items() -> None:
    record = _sts_record()
    scores = point_scores(record)
    wmeans = []
    for task, sizes in YEARS.items():
        rows = record[record.task == task]
        per_subset = [
            100 * spearmanr(g.prediction, g.gold).statistic for _, g in rows.groupby("subset", sort=False)
        ]
        wmean = float(np.dot(per_subset, sizes) / sum(sizes))
        assert scores[f"{task}.spearman_wmean"] == pytest.approx(wmean, abs=1e-10)
        assert scores[f"{task}.spearman_mean"] == pytest.approx(np.mean(per_subset), abs=1e-10)
        pooled = 100 * spearmanr(rows.prediction, rows.gold).statistic
        assert scores[f"{task}.spearman"] == pytest.approx(pooled, abs=1e-10)
        wmeans.append(wmean)
    assert scores["STS12-16.wmean"] == pytest.approx(np.mean(wmeans), abs=1e-10)
    assert "STS.avg" not in scores  # STS-B and SICK-R are not in this record: no partial average


def test_resamples_keep_every_subset_and_fold_size() -> None:
    record = _sts_record()
    seen: dict[str, int] = {}

    def counts(name: str, n: int) -> np.ndarray:
        drawn = Resampler(50).counts(name, n)
        seen[name] = int(drawn.sum(axis=1).max())
        assert (drawn.sum(axis=1) == n).all()
        return drawn

    item_scores(record, counts, ["STS12-16.wmean"])
    assert {name.split("#")[0]: n for name, n in seen.items()} == {
        f"{t}/{t}-s{i}": n for t, sizes in YEARS.items() for i, n in enumerate(sizes)
    }


def test_cross_validated_accuracy_is_the_rounded_mean_of_fold_accuracies() -> None:
    """SentEval rounds each fold's accuracy to two decimals before the mean (InnerKFoldClassifier,
    validation.py:38-105, as evaluate.tasks.transfer); on these 97 items that rounding moves the result
    by 0.01, so the order of the two roundings is pinned."""
    rng = np.random.default_rng(5)
    gold = rng.integers(0, 2, 97)
    predicted = np.where(rng.random(97) < 0.77, gold, 1 - gold)
    fold = np.arange(97) % 5
    record = item_rows("MR", "senteval_cv", predicted, gold, fold=fold)
    exact = [100 * float(np.mean(predicted[fold == f] == gold[fold == f])) for f in range(5)]
    by_fold = [round(value, 2) for value in exact]
    assert point_scores(record)["MR.acc"] == round(float(np.mean(by_fold)), 2) == 74.1
    assert round(float(np.mean(exact)), 2) == 74.11  # rounding only the mean would print this


def test_only_the_tasks_a_metric_needs_are_scored() -> None:
    record = concat_items([_sts_record(), item_rows("TREC", "senteval_test", [1, 2, 3], [1, 2, 2])])
    assert set(point_scores(record, ["TREC.acc"])) == {"TREC.acc"}


def test_record_round_trips_through_parquet(tmp_path) -> None:  # noqa: ANN001
    record = concat_items([_sts_record(), item_rows("MR", "senteval_cv", [0, 1], [1, 1], fold=[0, 1])])
    path = write_items(record, tmp_path / "items.parquet")
    back = read_items(path)
    pd.testing.assert_frame_equal(back, record, check_dtype=False)
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left


def _accuracy_record(accuracy: float, seed: int, n: int = 4000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n)
    return item_rows("TREC", "senteval_test", np.where(rng.random(n) < accuracy, gold, 1 - gold), gold)


def test_two_levels_carry_the_spread_between_seeds() -> None:
    """Seeds scoring about 60, 70 and 80 on 4000 items: the plain two-level bootstrap's mean of 3 seeds
    drawn with replacement has a standard deviation of sqrt(66.7 / 3) = 4.7 points, far above the item
    noise (0.7); the few-seeds correction widens the interval to Student's: t_{2,0.975} s / sqrt(3) =
    4.303 x 10 / 1.732 = 24.8 points each side (the items' 0.7 adding in quadrature)."""
    seeds = [_accuracy_record(a, s) for s, a in enumerate([0.6, 0.7, 0.8])]
    plain = resampled_scores(seeds, Resampler(3000), few_seeds_correction=False)["TREC.acc"]
    assert np.std(plain) == pytest.approx(np.sqrt(200 / 3 / 3), rel=0.15)
    values = resampled_scores(seeds, Resampler(3000))["TREC.acc"]
    low, high = interval(values)
    assert (high - low) / 2 == pytest.approx(4.303 * 10 / np.sqrt(3), rel=0.1)
    items_only = resampled_scores(seeds[1:2], Resampler(3000))["TREC.acc"]
    assert np.std(items_only) < 1.0


def test_rows_with_the_same_seeds_are_paired_by_seed() -> None:
    """Row b is row a with 2 more points on each seed: the paired difference sees no seed noise."""
    row_a = [_accuracy_record(a, s) for s, a in enumerate([0.6, 0.7, 0.8])]
    row_b = [_accuracy_record(a + 0.02, s) for s, a in enumerate([0.6, 0.7, 0.8])]
    resampler = Resampler(2000)
    difference = (
        resampled_scores(row_b, resampler)["TREC.acc"] - resampled_scores(row_a, resampler)["TREC.acc"]
    )
    low, high = interval(difference)
    assert 0 < low < 2 < high < 4


def test_rows_pair_by_seed_names_and_items_by_their_gold() -> None:
    resampler = Resampler(50)
    assert np.array_equal(resampler.seed_draws([1, 2, 3]), resampler.seed_draws([1, 2, 3]))
    assert not np.array_equal(resampler.seed_draws([1, 2, 3]), resampler.seed_draws([1, 2, 4]))
    gold = np.arange(20.0)
    assert stratum("STS12", "MSRpar", -1, gold) == stratum("STS12", "MSRpar", -1, gold.copy())
    assert stratum("STS12", "MSRpar", -1, gold) != stratum("STS12", "MSRpar", -1, gold[::-1])  # unpaired


def test_constant_predictions_have_no_interval_and_no_verdict() -> None:
    from harness.stats.compare import Difference, judge

    gold = np.round(np.random.default_rng(0).uniform(0, 5, 200), 1)
    flat = item_rows("STSBenchmark", "sts", np.zeros(200), gold)
    values = resampled_scores([flat], Resampler(200))["STSBenchmark.spearman"]
    assert np.isnan(values).all() and np.isnan(interval(values)).all()
    difference = Difference.of(float("nan"), values - 50.0)
    assert np.isnan(difference.p) and judge([difference])[0] == ["inconclusive"]


def test_glue_scores_are_scikit_learns_on_the_record() -> None:
    """A GLUE dev record (protocol `glue`): CoLA's MCC and MRPC's F1 of class 1 x 100 equal
    scikit-learn's on the same predictions; each task's accuracy its share correct."""
    from sklearn.metrics import f1_score, matthews_corrcoef

    rng = np.random.default_rng(4)
    gold = rng.integers(0, 2, 300)
    predicted = np.where(rng.random(300) < 0.7, gold, 1 - gold)
    record = concat_items([item_rows(task, "glue", predicted, gold) for task in ("CoLA", "MRPC")])
    scores = point_scores(record)
    assert scores["dev.CoLA.mcc"] == pytest.approx(100 * matthews_corrcoef(gold, predicted))
    assert scores["dev.MRPC.f1"] == pytest.approx(100 * f1_score(gold, predicted))
    assert scores["dev.CoLA.acc"] == pytest.approx(100 * np.mean(predicted == gold))
