"""Multi-task scores and both 'overall' definitions on predictions with known answers."""

from pathlib import Path

import numpy as np
import pytest

from harness.data.cs224n import read_multitask
from harness.evaluate.multitask import score_predictions


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
