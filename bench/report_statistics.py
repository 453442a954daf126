"""What the report's statistics cost and how many resamples they need, on a study already in the store
(default: the demo's, after `make demo`).

    .venv/bin/python bench/report_statistics.py [--study lambda_tau_sweep] [--repeats 3]

1. `harness report STUDY` as typed (a new process, pdflatex included where installed) with and without
   `--no-statistics`, alternated so that a drifting shared VM slows both alike: median wall time of each
   and the share the statistics add (the issue's goal: at most 20% on the demo's 4 trials).
2. For B in 1000, 2000, 4000, 8000: every table cell's 95% interval with two bootstrap seeds, and how far
   the ends move between them (the default B should keep them within 0.05 points), with the seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from steps import machine_header

HARNESS = str(Path(sys.executable).with_name("harness"))


def report_seconds(study: str, repeats: int) -> None:
    times: dict[str, list[float]] = {"with statistics": [], "--no-statistics": []}
    with tempfile.TemporaryDirectory() as out:
        for _ in range(repeats):
            for label, extra in (("--no-statistics", ["--no-statistics"]), ("with statistics", [])):
                start = time.perf_counter()
                subprocess.run(
                    [HARNESS, "report", study, "--out", out, *extra], check=True, capture_output=True
                )
                times[label].append(time.perf_counter() - start)
    base, full = (statistics.median(times[k]) for k in ("--no-statistics", "with statistics"))
    for label, values in times.items():
        print(f"harness report {study} {label}: median {statistics.median(values):.2f} s "
              f"(runs {', '.join(f'{v:.2f}' for v in values)})")  # fmt: skip
    print(f"the statistics add {full - base:.2f} s = {100 * (full - base) / base:.1f}% of the report's time")


def cells(study: str) -> list[tuple[list[str], str]]:
    """Every (runs, metric) cell the study's tables show: each run alone, each table metric."""
    from harness.report.collect import varying_params
    from harness.report.spec import load_spec
    from harness.tracking.study_runs import trial_frame
    from harness.tracking.tracker import Tracker

    frame, _ = trial_frame(Tracker(), study)
    spec = load_spec(study, list(frame.columns), varying_params(frame))
    metrics = set()
    for table in spec.tables:
        columns = getattr(table, "columns", None)
        metrics.update(columns.values() if isinstance(columns, dict) else [table.metric])
    return [([run_id], metric) for run_id in frame.run_id for metric in sorted(metrics) if metric in frame]


def movement(study: str) -> None:
    from harness.report.evidence import Evidence
    from harness.stats.compare import interval
    from harness.stats.resample import Resampler
    from harness.tracking.tracker import Tracker

    shown = cells(study)
    print(f"{len(shown)} cells ({len({m for _, m in shown})} metrics x runs)")
    for b in (1000, 2000, 4000, 8000):
        ends, seconds = [], []
        for seed in (1, 2):
            evidence = Evidence(Tracker(), Resampler(b, seed))
            start = time.perf_counter()
            ends.append([interval(evidence.resampled(r, [m])[m]) for r, m in shown])
            seconds.append(time.perf_counter() - start)
        moved = np.abs(np.array(ends[0]) - np.array(ends[1]))
        spread = f"max {moved.max():.3f}, mean {moved.mean():.3f}, 95th pct {np.percentile(moved, 95):.3f}"
        print(f"B = {b}: ends move {spread} points; {np.mean(seconds):.2f} s per bootstrap seed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", default="lambda_tau_sweep")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    print(machine_header())
    if not args.skip_timing:
        report_seconds(args.study, args.repeats)
    movement(args.study)


if __name__ == "__main__":
    main()
