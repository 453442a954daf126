"""Same seed, same config, CPU: two runs give identical metrics."""

from pathlib import Path

from harness.config import load_study
from harness.runner import run_study
from tests.helpers import child_runs, tiny_study


def test_same_seed_same_metrics(tmp_path: Path, tiny_bert: Path) -> None:
    metrics = []
    for name in ("same-a", "same-b"):
        path = tiny_study(tmp_path, tiny_bert, {"seed": [7]}, name=name, method="fusion", batch_size=4,
                          max_steps=3, contrastive_limit=32)  # fmt: skip
        run_study(load_study(path), progress=False)
        (run,) = child_runs(name)
        metrics.append({k: v for k, v in run.data.metrics.items() if k != "train.seconds"})
    assert metrics[0] == metrics[1]
    assert "dev.overall" in metrics[0] and len(metrics[0]) > 10
