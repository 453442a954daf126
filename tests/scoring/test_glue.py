"""The GLUE objective: scores as GLUE defines them (checked against the formulas by hand), and a GLUE
stage that fine-tunes, then probes, on real RTE data."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from harness.resolve.study_spec import load_study
from harness.scoring.glue import glue_scores
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, item_rows, read_items
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
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


@pytest.mark.parametrize("task", ["CoLA", "MRPC", "RTE", "STS-B"])
def test_the_item_record_gives_back_every_glue_score(task: str) -> None:
    """A GLUE dev record (protocol `glue`: each example's predicted class or score beside its gold value)
    gives back every metric of its task: accuracy to the last bit, MCC, F1 and correlations within 1e-9
    (STS-B's scores are float32, as the objective predicts them)."""
    rng = np.random.default_rng(1)
    if task == "STS-B":
        gold = rng.uniform(0, 5, 300).astype(np.float32)
        pred = (gold + rng.normal(0, 1, 300)).astype(np.float32)
    else:
        gold, pred = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
    logged = {f"dev.{name}": value for name, value in glue_scores(task, pred, gold).items()}
    recomputed = point_scores(item_rows(task, "glue", pred, gold))
    assert set(recomputed) == set(logged)
    for name, value in logged.items():
        if name.endswith(".acc"):
            assert recomputed[name] == value
        assert recomputed[name] == pytest.approx(value, abs=1e-9), name


@pytest.mark.slow
def test_a_glue_pipeline_fine_tunes_then_probes_rte(tmp_path: Path, tiny_bert: Path, data_dir: Path) -> None:
    """Five steps on RTE, then the final dev predictions read back from MLflow: their record gives back
    the logged scores, its gold values are RTE's dev labels as the dev file lists them (read here, apart
    from harness: a record or a score of another split, or of shuffled labels, fails), and the logged
    accuracy is 100 x the share of predictions equal to those labels."""
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
    client = Tracker().client  # the final dev predictions, read back from MLflow alone
    record = read_items(Path(client.download_artifacts(run.info.run_id, ARTIFACT, str(tmp_path))))
    results = json.loads(
        Path(client.download_artifacts(run.info.run_id, "results.json", str(tmp_path))).read_text()
    )
    assert set(record.task) == {"RTE"} and record.item.tolist() == list(range(len(results["predictions"])))
    assert record.prediction.tolist() == results["predictions"]
    assert point_scores(record) == {f"dev.{name}": value for name, value in results["scores"].items()}
    lines = (data_dir / "glue" / "RTE" / "dev.tsv").read_text(encoding="utf-8").splitlines()
    labels = [line.split("\t")[-1] for line in lines[1:] if line.strip()]
    gold = np.array([["entailment", "not_entailment"].index(label) for label in labels])
    assert len(gold) == 277 and record.gold.tolist() == gold.tolist()
    predicted = np.array(results["predictions"])
    assert metrics_of(run)["dev.RTE.acc"] == pytest.approx(100 * np.mean(predicted == gold), abs=1e-9)
