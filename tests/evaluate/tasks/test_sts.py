"""STS scoring: the three aggregations on hand-made subsets with known answers, and the per-item record
of a real evaluation giving them back."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from harness.data.senteval import STSPairs
from harness.evaluate.registry import collected
from harness.evaluate.suite import evaluate_tasks, flat_metrics
from harness.evaluate.tasks.sts import STS_TASKS, cosine, load_sts_task, score_task
from harness.stats.item_scores import point_scores


def subset(name: str, cosines: list[float], gold: list[float]) -> tuple[STSPairs, dict[str, np.ndarray]]:
    """Pairs whose embeddings have exactly the given cosine similarities."""
    left = [f"{name}-l{i}" for i in range(len(cosines))]
    right = [f"{name}-r{i}" for i in range(len(cosines))]
    emb = {s: np.array([1.0, 0.0]) for s in left}
    emb |= {s: np.array([c, math.sqrt(1 - c * c)]) for s, c in zip(right, cosines, strict=True)}
    return STSPairs(name, left, right, np.array(gold, dtype=float)), emb


def test_all_mean_and_wmean_by_hand() -> None:
    a, emb_a = subset("a", [0.1, 0.2], [2.0, 1.0])  # reversed: Spearman -100
    b, emb_b = subset("b", [0.3, 0.4, 0.5], [3.0, 4.0, 5.0])  # monotone: Spearman 100
    scores = score_task([a, b], emb_a | emb_b)
    assert scores["subsets"]["a"]["spearman"] == pytest.approx(-100)
    assert scores["subsets"]["b"]["spearman"] == pytest.approx(100)
    assert scores["spearman_mean"] == pytest.approx(0.0)
    assert scores["spearman_wmean"] == pytest.approx((2 * -100 + 3 * 100) / 5)
    # pooled: predicted ranks 1..5, gold ranks 2,1,3,4,5 -> 1 - 6 * 2 / (5 * 24) = 0.9
    assert scores["spearman"] == pytest.approx(90.0)
    assert scores["n"] == 5


def test_pearson_and_spearman_differ_on_monotone_non_linear_data() -> None:
    """Gold scores a convex function of the cosines: every rank agrees (Spearman 100) but the relation
    is not linear (Pearson below 100), so swapping one correlation for the other, or reporting one under
    both names, fails here; each is scipy's on the same pairs x 100, per subset and pooled."""
    cosines = [0.05, 0.1, 0.2, 0.4, 0.7, 0.95]
    gold = [math.exp(6 * c) for c in cosines]
    pairs, emb = subset("convex", cosines, gold)
    scores = score_task([pairs], emb)
    expected_pearson = 100 * pearsonr(cosines, gold).statistic
    assert scores["spearman"] == pytest.approx(100.0)
    assert scores["pearson"] == pytest.approx(expected_pearson, abs=1e-9)
    assert scores["pearson"] < 95.0  # far enough from Spearman that neither can pass for the other
    assert scores["subsets"]["convex"]["pearson"] == pytest.approx(expected_pearson, abs=1e-9)
    assert scores["subsets"]["convex"]["spearman"] == pytest.approx(100.0)


def test_each_task_reads_its_test_split(data_dir: Path) -> None:
    """SimCSE's and SentEval's STS-B and SICK-R scores are on the test splits (1,379 and 4,927 pairs;
    Cer et al. 2017, Marelli et al. 2014); `STSBenchmark-dev` is the 1,500-pair dev split."""
    sizes = {
        task: [len(s) for s in load_sts_task(data_dir, task)] for task in ("STSBenchmark", "SICKRelatedness")
    }
    assert sizes == {"STSBenchmark": [1379], "SICKRelatedness": [4927]}
    assert [len(s) for s in load_sts_task(data_dir, "STSBenchmark", split="dev")] == [1500]
    assert [len(s) for s in load_sts_task(data_dir, "SICKRelatedness", split="dev")] == [500]


def test_cosine_is_scale_free() -> None:
    a = np.array([[1.0, 0.0], [3.0, 4.0]])
    b = np.array([[2.0, 0.0], [-3.0, -4.0]])
    np.testing.assert_allclose(cosine(a, b), [1.0, -1.0])


def random_encode(sentences: list[str]) -> dict[str, np.ndarray]:
    vectors = np.random.default_rng(0).standard_normal((len(sentences), 8)).astype(np.float32)
    return dict(zip(sentences, vectors, strict=True))


def test_the_item_record_gives_back_every_sts_score(data_dir: Path) -> None:
    """The record of an STS evaluation: each pair's cosine beside its gold score, subset by subset in the
    files' order. scipy's Spearman of a task's stored cosines x 100 is its `spearman`, and a year's
    size-weighted mean of its subsets' Spearmans its `spearman_wmean`, to the last bit; harness.stats
    recomputes every score and aggregate from the record alone."""
    items: list = []
    results = evaluate_tasks(random_encode, data_dir, [*STS_TASKS, "AlignUniform"], items=items)
    json.dumps(results)  # the scores alone: the record went to `items`
    assert len(items) == len(STS_TASKS)  # none for the geometry task
    record = collected(items)
    assert list(record.task.unique()) == list(STS_TASKS) and set(record.protocol) == {"sts"}
    for task in STS_TASKS:
        part = record[record.task == task]
        assert 100 * spearmanr(part.prediction, part.gold).statistic == results[task]["spearman"]
        subsets = load_sts_task(data_dir, task)
        assert list(part.subset.unique()) == [s.name for s in subsets]
        for pairs in subsets:
            rows = part[part.subset == pairs.name]
            assert rows.item.tolist() == list(range(len(pairs)))
            np.testing.assert_array_equal(rows.gold.to_numpy(), pairs.scores)
    sts12 = record[record.task == "STS12"]
    by_subset = [p for _, p in sts12.groupby("subset", sort=False)]
    spearmans = np.array([100 * spearmanr(p.prediction, p.gold).statistic for p in by_subset])
    sizes = np.array([len(p) for p in by_subset], dtype=np.float64)
    assert (spearmans * sizes).sum() / sizes.sum() == results["STS12"]["spearman_wmean"]
    logged, recomputed = flat_metrics(results), point_scores(record)
    assert {"STS.avg", "STS12-16.wmean", "SICKRelatedness.spearman_wmean"} <= set(recomputed)
    for name, value in recomputed.items():
        assert value == pytest.approx(logged[name], abs=1e-9), name
