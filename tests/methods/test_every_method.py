"""Every registered method runs two steps on a tiny random BERT and logs its metrics to MLflow."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import load_study
from harness.registry import method_names
from harness.runner import run_study
from tests.helpers import child_runs, tiny_study

# Per-method fields that keep the two steps small.
SMALL_CONTRASTIVE = {"contrastive_limit": 48, "contrastive_batch_size": 8, "contrastive_max_steps": 2}
EXTRA = {
    "multitask": {"batch_size": 4, "combiner": "pcgrad"},
    "frozen": {"batch_size": 4},
    "contrastive_first": {"batch_size": 4, **SMALL_CONTRASTIVE},
    "supervised_first": {"batch_size": 4, "contrastive": "sup_quora", **SMALL_CONTRASTIVE},
    "fusion": {"batch_size": 4, "combiner": "batch_round_robin", **SMALL_CONTRASTIVE},
    "unsup_simcse": {"batch_size": 8, "contrastive_data": ["wiki", "sts"], "contrastive_limit": 48},
    "sup_simcse": {"batch_size": 8, "sup_data": ["quora", "nli"], "contrastive_limit": 48},
    "supcl_seq": {"batch_size": 4, "views": [0.0, 0.1]},
}


@pytest.mark.parametrize("method", method_names())
def test_method_trains_two_steps_and_logs(method: str, tmp_path: Path, tiny_bert: Path) -> None:
    base = {"method": method, "max_steps": 2, "eval_every": 2, **EXTRA.get(method, {})}
    study = load_study(tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name=f"m-{method}", **base))
    opt = run_study(study, progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE"], opt.trials[0].user_attrs
    (run,) = child_runs(f"m-{method}")
    assert run.info.status == "FINISHED" and run.data.tags["method"] == method
    assert run.data.metrics["train.steps"] >= 2 and "train.loss" in run.data.metrics
    assert any(k.startswith("dev.") for k in run.data.metrics)
