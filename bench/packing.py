"""Trials per GPU-hour with K trials sharing each GPU (`run-study --trials-per-gpu K`, issue 25 item 2).

    .venv/bin/python bench/packing.py [--model all-MiniLM-L6-v2] [--ks 1,2,4,8] [--trials 8]
        [--steps 200] [--batch-size 64] [--length 32] [--gpu-sharing auto,time-slicing] [--json FILE]

The same study for every K: `--trials` unsupervised SimCSE trials (a grid over the learning rate, so no
two are alike), each `--steps` steps on the local wiki sentences, then the STS-B test set for its score
(`final_tasks: [quick]`), run by `harness run-study STUDY --trials-per-gpu K` in a fresh HARNESS_HOME
(a fresh store, no stage cache between Ks). Wall time from the command's start to its end, so worker
start-up and the coordinator's own work are counted, as a user would see them. Prints, per K, the wall
time, trials per hour and per GPU-hour (the GPUs the command could see) and the speed-up over the first K.
Every trial's score is printed too: packing must not change them beyond the last digits (the study runs
at `precision: auto`, bf16 on a GPU, and the workers' thread counts and kernels' reduction order differ).
Where the weights are not here (bert-base-uncased), a random model of the config (harness.encoders.standin).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from steps import machine_header, write_figures

from harness.data.paths import resolve_data_dir
from harness.encoders.standin import local_model


def study_file(folder: Path, model: str, trials: int, steps: int, batch_size: int, length: int) -> Path:
    """The benchmark's study: `trials` grid points over the learning rate, one profile."""
    rates = [round(1e-5 * (1 + i), 8) for i in range(trials)]
    config = {
        "name": "packing_bench",
        "description": "bench/packing.py: unsupervised SimCSE trials of a fixed size",
        "sampler": "grid",
        "default_profile": "bench",
        "base": {
            "method": "unsup_simcse",
            "model": model,
            "pooling": "mean",
            "max_steps": steps,
            "epochs": 1 + steps * batch_size // 10_000,  # the wiki head's ~11.5k sentences an epoch
            "batch_size": batch_size,
            "max_seq_length": length,
            "eval_every": 100_000,
            "final_tasks": ["quick"],
        },  # fmt: skip
        "search": {"lr": rates},
        "profiles": {"bench": {}},
    }
    path = folder / "packing_bench.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_with(
    k: int, gpus: int, study: Path, home: Path, sharing: str = "auto"
) -> tuple[float, list[float], str]:
    """(wall seconds, the trials' objective values in trial order, how the GPU was shared) of one
    `run-study --trials-per-gpu K --workers K x GPUs --gpu-sharing S` (named, so that K = 1 uses every GPU
    too: one worker runs in the command's own process, more are forked from the fork server, whose
    imports are then in the time)."""
    env = {**os.environ, "HARNESS_HOME": str(home), "MLFLOW_TRACKING_URI": f"sqlite:///{home}/mlflow.db"}
    command = [sys.executable, "-m", "harness", "run-study", str(study), "--trials-per-gpu", str(k),
               "--workers", str(k * max(1, gpus)), "--gpu-sharing", sharing, "--no-progress"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"K={k}: run-study failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    import optuna
    from optuna.storages.journal import JournalFileBackend

    storage = optuna.storages.JournalStorage(JournalFileBackend(str(home / "optuna.journal")))
    trials = optuna.load_study(study_name="packing_bench.bench", storage=storage).trials
    said = done.stdout + done.stderr
    mode = (
        "mps" if "CUDA MPS (" in said or "MPS daemon runs" in said else "time-slicing" if k > 1 else "alone"
    )
    return wall, [t.value for t in sorted(trials, key=lambda t: t.number)], mode


def visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="a local folder, alias or known config")
    parser.add_argument("--ks", default="1,2,4,8", help="trials per GPU to compare")
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument(
        "--gpu-sharing", default="auto", help="run-study's --gpu-sharing values to compare for K > 1"
    )
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args()
    path, note = local_model(args.model, resolve_data_dir())
    gpus = visible_gpus()
    print(machine_header())
    print(f"model {args.model}{f' ({note})' if note else ''}; {args.trials} trials of {args.steps} steps, "
          f"batch {args.batch_size} x <= {args.length} tokens; {gpus or 'no'} GPU(s) visible")  # fmt: skip
    rows, first = [], None
    with tempfile.TemporaryDirectory() as scratch:
        study = study_file(Path(scratch), path, args.trials, args.steps, args.batch_size, args.length)
        runs = [(k, sharing) for k in map(int, args.ks.split(",")) for sharing in
                (args.gpu_sharing.split(",") if k > 1 else ["auto"])]  # fmt: skip
        for k, sharing in runs:
            wall, scores, mode = run_with(k, gpus, study, Path(scratch) / f"home-k{k}-{sharing}", sharing)
            per_hour = args.trials / wall * 3600
            first = first or per_hour
            per_gpu_hour = per_hour / gpus if gpus else None
            rows.append({"k": k, "sharing": mode, "wall_s": wall, "trials_per_hour": per_hour,
                         "per_gpu_hour": per_gpu_hour, "speedup_vs_first_k": per_hour / first,
                         "scores": scores})  # fmt: skip
            gpu_hour = f"{per_gpu_hour:7.1f}/GPU-hour" if per_gpu_hour else "no GPU"
            listed = ", ".join(f"{s:.2f}" for s in scores)
            print(f"K={k} ({mode}): {wall:7.1f} s  {per_hour:7.1f} trials/hour  {gpu_hour}  "
                  f"{per_hour / first:.2f}x the first K  scores {listed}")  # fmt: skip
    write_figures(args.json, args.model, rows)


if __name__ == "__main__":
    main()
