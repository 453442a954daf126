"""Issue 11 item 4: the same study, seed and thread count in two processes gives bit-identical metrics,
whatever the process's string-hash seed (set and dict orders) is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.tracking.metric_names import history, metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, harness, harness_here, tiny_study


@pytest.mark.slow
def test_same_seed_in_two_processes_gives_identical_metrics(tmp_path: Path, tiny_bert: Path) -> None:
    """Once in a new process with a fixed hash seed, once in this test process (its own random hash seed,
    after whatever this worker ran before: no hidden state may leak into a trial)."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="twice", max_steps=6, eval_every=3,
                       final_tasks=None)  # fmt: skip
    other_seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    metrics = []
    for where in ("new process", "this process"):
        home = tmp_path / f"home-{len(metrics)}"
        env = {"HARNESS_HOME": str(home), "PYTHONHASHSEED": other_seed}
        run = harness if where == "new process" else harness_here
        result = run("run-study", study, "--threads", "1", "--no-progress", env=env)
        assert result.returncode == 0, result.stderr
        (child,) = child_runs("twice", f"sqlite:///{home / 'mlflow.db'}")
        assert child.data.tags["threads"] == "1"
        tracker = Tracker(f"sqlite:///{home / 'mlflow.db'}")
        losses = [m.value for m in history(tracker.client, child.info.run_id, "train.loss")]
        metrics.append(
            {**{k: v for k, v in metrics_of(child).items() if k != "train.seconds"}, "losses": losses}
        )
    assert {"STS12.spearman", "STSBenchmark.spearman", "dev.STSBenchmark.spearman.best"} <= set(metrics[0])
    assert len(metrics[0]["losses"]) == 6
    assert metrics[0] == metrics[1]
