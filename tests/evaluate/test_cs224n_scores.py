"""Multi-task scores and both 'overall' definitions on predictions with known answers, and the per-item
record that gives them back."""

from pathlib import Path

import numpy as np
import pytest

from harness.data.cs224n import read_multitask
from harness.evaluate.cs224n_scores import multitask_items, score_predictions
from harness.stats.item_scores import point_scores


def test_scores_and_both_overalls(data_dir: Path) -> None:
    data = read_multitask(data_dir)
    sst = np.eye(5)[data.sst_dev.labels]  # every SST prediction right
    sst[:100] = np.eye(5)[(data.sst_dev.labels[:100] + 1) % 5]  # except the first 100
    quora = np.where(data.quora_dev.targets > 0, 0.9, 0.1)  # all right
    sts = -data.sts_dev.targets  # perfectly anti-correlated: r = -1
    scores = score_predictions({"sst": sst, "quora": quora, "sts": sts}, data)
    acc_sst = 1 - 100 / len(data.sst_dev)
    assert scores["sst.acc"] == pytest.approx(acc_sst) and scores["quora.acc"] == 1.0
    assert scores["sts.pearson"] == pytest.approx(-1.0)
    assert scores["overall"] == pytest.approx((acc_sst + 1.0 - 1.0) / 3)  # Chen: plain mean
    assert scores["overall_r01"] == pytest.approx((acc_sst + 1.0 + 0.0) / 3)  # David et al.: (r + 1) / 2


def test_single_task_has_no_overall(data_dir: Path) -> None:
    data = read_multitask(data_dir)
    scores = score_predictions({"sts": data.sts_dev.targets}, data)
    assert scores == {"sts.pearson": pytest.approx(1.0)}


def test_the_item_record_gives_back_every_score(data_dir: Path) -> None:
    """The record keeps what each dev item is scored on: the SST class (argmax), the Quora decision
    (p > 0.5, a tie at 0.5 included), the STS score; the scores recomputed from it are the logged ones
    (accuracies to the last bit, Pearson r and the overalls within 1e-9)."""
    data = read_multitask(data_dir)
    rng = np.random.default_rng(0)
    predictions = {
        "sst": rng.dirichlet(np.ones(5), len(data.sst_dev)),
        "quora": np.where(rng.random(len(data.quora_dev)) < 0.05, 0.5, rng.random(len(data.quora_dev))),
        "sts": (data.sts_dev.targets + rng.normal(0, 2, len(data.sts_dev))).astype(np.float32),
    }
    logged = {f"dev.{name}": value for name, value in score_predictions(predictions, data).items()}
    record = multitask_items(predictions, data)
    assert list(record.task.unique()) == ["sst", "quora", "sts"] and set(record.protocol) == {"cs224n"}
    assert record[record.task == "sst"].prediction.tolist() == predictions["sst"].argmax(-1).tolist()
    assert set(record[record.task == "quora"].prediction) == {0.0, 1.0}
    recomputed = point_scores(record)
    assert set(recomputed) == set(logged)
    assert recomputed["dev.sst.acc"] == logged["dev.sst.acc"]
    assert recomputed["dev.quora.acc"] == logged["dev.quora.acc"]
    for name in ("dev.sts.pearson", "dev.overall", "dev.overall_r01"):
        assert recomputed[name] == pytest.approx(logged[name], abs=1e-9)
