"""Stage cache saving: a 4-trial study that varies only the fine-tuning stage (David et al. Table 9's
paraphrase x similarity functions after unsupervised contrastive pre-training), run without and with the
stage cache, one after the other in this process, same machine.

    .venv/bin/python bench/stage_cache.py [--pretrain-steps 120] [--finetune-steps 10] [--model DIR]

Prints each trial's training time, the study's wall time both ways, and whether every final metric is
identical (it must be: the cache restores weights, RNG and counters bit for bit, fp32).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import yaml
from steps import machine_header

from harness.tracking.metric_names import metrics_of

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def study_yaml(folder: Path, name: str, cache: bool, model: str, pretrain: int, finetune: int) -> str:
    config = {
        "name": name,
        "default_profile": "bench",
        "base": {
            "method": "pipeline",
            "model": model,
            "pooling": "mean",
            "max_seq_length": 64,
            "precision": "fp32",
            "batch_size": 16,
            "log_every": 5,
            "eval_batch_size": 256,
            "stages": [
                {"contrastive": "unsup", "data": ["sst", "quora", "sts"], "max_steps": pretrain},
                {"finetune": "multitask", "max_steps": finetune},
            ],
            "stage_cache": cache,
            "stage_cache_dir": str(folder / "stage-cache"),
        },
        "search": {"paraphrase_head": ["plain_cosine", "linear"], "similarity_head": ["cosine", "linear"]},
        "profiles": {"bench": {}},
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pretrain-steps", type=int, default=120)
    parser.add_argument("--finetune-steps", type=int, default=10)
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    args = parser.parse_args()
    print(machine_header())
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        os.environ["HARNESS_HOME"] = str(folder / ".harness")
        from harness.resolve.study_spec import load_study
        from harness.study.runner import run_study
        from harness.tracking.tracker import Tracker

        results = {}
        for name, cache in (("without_cache", False), ("with_cache", True)):
            path = study_yaml(folder, name, cache, args.model, args.pretrain_steps, args.finetune_steps)
            start = time.perf_counter()
            run_study(load_study(path), progress=False)
            wall = time.perf_counter() - start
            tracker = Tracker()
            experiment = tracker.client.get_experiment_by_name(name).experiment_id
            runs = tracker.client.search_runs([experiment], "tags.`harness.role` = 'trial'")
            runs = sorted(runs, key=lambda r: int(r.data.tags["trial"]))
            print(f"\n{name}: study wall time {wall:.1f} s")
            for run in runs:
                reused = run.data.tags.get("stage_cache.reused", "-")
                seconds = metrics_of(run)["train.seconds"]
                print(f"  trial {run.data.tags['trial']}: training {seconds:.1f} s, reused: {reused}")
            results[name] = (
                wall,
                [{k: v for k, v in metrics_of(r).items() if k != "train.seconds"} for r in runs],
            )
        (plain, plain_metrics), (cached, cached_metrics) = results["without_cache"], results["with_cache"]
        print(f"\nstudy time {plain:.1f} s -> {cached:.1f} s ({plain / cached:.2f}x); identical metrics: "
              f"{plain_metrics == cached_metrics}")  # fmt: skip


if __name__ == "__main__":
    main()
