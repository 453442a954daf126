"""Every registered method runs two steps on a tiny random BERT and logs its metrics to MLflow."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.registry import method_names
from harness.resolve.study_spec import load_study
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, read_items
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, tiny_study

# Per-method fields that keep the two steps small.
SMALL_CONTRASTIVE = {"contrastive_limit": 48, "contrastive_batch_size": 8, "contrastive_max_steps": 2}
EXTRA = {
    "multitask": {"batch_size": 4, "combiner": "pcgrad"},
    "frozen": {"batch_size": 4},
    "contrastive_first": {"batch_size": 4, **SMALL_CONTRASTIVE},
    "supervised_first": {"batch_size": 4, "contrastive": "sup_quora", **SMALL_CONTRASTIVE},
    "fusion": {"batch_size": 4, "combiner": "batch_round_robin"},
    "unsup_simcse": {"batch_size": 8, "contrastive_data": ["wiki", "sts"], "contrastive_limit": 48},
    "sup_simcse": {"batch_size": 8, "sup_data": ["quora", "nli"], "contrastive_limit": 48},
    "supcl_seq": {"batch_size": 4, "views": [0.0, 0.1]},
    "pipeline": {
        "batch_size": 4,
        "stages": [
            {"contrastive": "sup_quora", "limit": 24, "max_steps": 1},
            {"contrastive": "unsup", "data": ["sts"], "limit": 24},
            {"finetune": "multitask"},
        ],
    },  # fmt: skip
}


@pytest.mark.slow
# ensemble: below; glove trains nothing and needs a vectors file: tests/methods/test_glove.py
@pytest.mark.slow
@pytest.mark.parametrize("method", [m for m in method_names() if m not in ("ensemble", "glove")])
def test_method_trains_two_steps_and_logs(method: str, tmp_path: Path, tiny_bert: Path) -> None:
    base = {"method": method, "max_steps": 2, "eval_every": 2, **EXTRA.get(method, {})}
    study = load_study(tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name=f"m-{method}", **base))
    opt = run_study(study, progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE"], opt.trials[0].user_attrs
    (run,) = child_runs(f"m-{method}")
    assert run.info.status == "FINISHED" and run.data.tags["method"] == method
    assert metrics_of(run)["train.steps"] >= 2 and "train.loss" in metrics_of(run)
    assert any(k.startswith("dev.") for k in metrics_of(run))


@pytest.mark.slow
def test_ensemble_takes_the_best_run_per_task(tmp_path: Path, tiny_bert: Path) -> None:
    source = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name="mt-source", method="multitask",
                        batch_size=4, max_steps=2, eval_every=2)  # fmt: skip
    store = f"sqlite:///{tmp_path / 'elsewhere.db'}"  # not the default store: the ensemble must be told
    run_study(load_study(source), tracking_uri=store, progress=False)
    runs = child_runs("mt-source", store)
    best = {
        m: max(metrics_of(r)[m] for r in runs) for m in ("dev.sst.acc", "dev.quora.acc", "dev.sts.pearson")
    }
    ensemble = tiny_study(tmp_path, tiny_bert, {"top_k": [1]}, name="mt-ensemble", method="ensemble",
                          source_study="mt-source", model=str(tmp_path / "no-such-model"))  # fmt: skip
    opt = run_study(load_study(ensemble), tracking_uri=store, progress=False)
    assert opt.trials[0].state.name == "COMPLETE", opt.trials[0].user_attrs
    assert "MLFLOW_TRACKING_URI" not in os.environ  # the store travels in the trial's context
    (run,) = child_runs("mt-ensemble", store)
    for metric, value in best.items():
        assert metrics_of(run)[metric] == pytest.approx(value)  # each task scored by its best run
    mean = (best["dev.sst.acc"] + best["dev.quora.acc"] + best["dev.sts.pearson"]) / 3
    assert metrics_of(run)["dev.overall"] == pytest.approx(mean)
    # the combined predictions' record gives the ensemble's own scores back
    record = read_items(
        Path(Tracker(store).client.download_artifacts(run.info.run_id, ARTIFACT, str(tmp_path)))
    )
    recomputed = point_scores(record)
    for metric in (*best, "dev.overall", "dev.overall_r01"):
        assert recomputed[metric] == pytest.approx(metrics_of(run)[metric], abs=1e-9)
