"""How close `harness plan` comes to a real run: the plan's estimate of each trial beside the trial's own
duration (its MLflow run's start to end) when the study then really runs, on this machine, one after the
other (never at the same time: they would share the cores).

    .venv/bin/python bench/plan_accuracy.py unsup_strategies [--profile smoke]

The study runs in a temporary HARNESS_HOME (a fresh store, nothing of yours is touched)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from harness.data.paths import resolve_data_dir
from harness.device import pick_device
from harness.planning.cost import Calibrator, trial_cost
from harness.resolve.study_spec import load_study
from harness.tracking.tracker import Tracker


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("study")
    parser.add_argument("--profile")
    args = parser.parse_args()
    study = load_study(args.study, args.profile)
    data_dir = resolve_data_dir(None)
    calibrator = Calibrator(pick_device("auto"))
    grid = list(study.grid())
    runs = study.grid_runs()
    estimates = [trial_cost(run, data_dir, calibrator).seconds for run in runs]
    points = [tuple(str(run.flat().get(k)) for k in grid) for run in runs]  # Optuna numbers trials its way
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HARNESS_HOME": home}
        command = [sys.executable, "-m", "harness", "run-study", args.study, "--no-progress"]
        subprocess.run(
            [*command, *(["--profile", args.profile] if args.profile else [])], env=env, check=True
        )
        tracker = Tracker(f"sqlite:///{Path(home) / 'mlflow.db'}")
        found = tracker.client.search_runs(
            [tracker.client.get_experiment_by_name(study.name).experiment_id], "tags.`harness.role` = 'trial'"
        )
        measured = {points.index(tuple(r.data.params.get(k, "None") for k in grid)):
                    (r.info.end_time - r.info.start_time) / 1000 for r in found}  # fmt: skip
    print(f"{study.name} ({study.profile}), {torch.get_num_threads()} threads; estimate vs measured seconds")
    for number, estimate in enumerate(estimates):
        real = measured.get(number)
        gap = f"{100 * (estimate - real) / real:+.0f}%" if real else "not run"
        shown = " ".join(f"{k}={v}" for k, v in zip(grid, points[number], strict=True))
        print(f"  {shown}: estimate {estimate:6.1f}  measured {real or float('nan'):6.1f}  {gap}")
    total_real = sum(measured.values())
    print(f"  total: estimate {sum(estimates):.0f}  measured {total_real:.0f}  "
          f"{100 * (sum(estimates) - total_real) / total_real:+.0f}%")  # fmt: skip


if __name__ == "__main__":
    main()
