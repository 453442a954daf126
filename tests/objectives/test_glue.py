"""The GLUE objective: scores as GLUE defines them (checked against the formulas by hand), and a GLUE
stage that fine-tunes, then probes, on real RTE data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from harness.metric_names import metrics_of
from harness.objectives.glue import glue_scores
from harness.runner import run_study
from harness.study_spec import load_study
from tests.helpers import child_runs, tiny_study


def test_classification_scores_match_their_formulas() -> None:
    gold = np.array([1, 1, 1, 0, 0, 0, 1, 0])
    pred = np.array([1, 1, 0, 0, 0, 1, 1, 1])
    tp, tn, fp, fn = 3, 2, 2, 1
    mcc = (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    assert glue_scores("CoLA", pred, gold) == pytest.approx({"CoLA.mcc": 100 * mcc, "CoLA.acc": 100 * 5 / 8})
    f1 = 2 * tp / (2 * tp + fp + fn)
    assert glue_scores("MRPC", pred, gold) == pytest.approx({"MRPC.f1": 100 * f1, "MRPC.acc": 62.5})


def test_regression_scores_are_pearson_and_spearman() -> None:
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 5, 50)
    pred = gold + rng.normal(0, 1, 50)
    scores = glue_scores("STS-B", pred, gold)
    assert scores["STS-B.pearson"] == pytest.approx(100 * pearsonr(pred, gold)[0])
    assert scores["STS-B.spearman"] == pytest.approx(100 * spearmanr(pred, gold)[0])


def test_a_glue_pipeline_fine_tunes_then_probes_rte(tmp_path: Path, tiny_bert: Path) -> None:
    stages = [
        {"glue": "RTE", "max_steps": 3},
        {"glue": "RTE", "heads_only": True, "max_steps": 2, "lr": 1e-3},
    ]
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="glue-rte", method="pipeline", stages=stages,
                      batch_size=8, objective_metric="RTE.acc")  # fmt: skip
    study = run_study(load_study(path), progress=False)
    (run,) = child_runs("glue-rte")
    assert run.info.status == "FINISHED" and metrics_of(run)["train.steps"] == 5
    assert 0 <= metrics_of(run)["dev.RTE.acc"] <= 100
    assert study.trials[0].value == metrics_of(run)["dev.RTE.acc.best"]
