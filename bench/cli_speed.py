"""Time the commands a researcher types without training anything: each one a fresh process, as typed.

    .venv/bin/python bench/cli_speed.py [--repeats 3]

Prints the CPU, then the median and best wall time of each command (a new Python process each, so the
imports are counted). The listing commands should answer in under a second; `methods` and `--dry-run`
import torch (the method registry) and take longer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from steps import machine_header

COMMANDS = [
    ["--help"],
    ["--version"],
    ["studies"],
    ["tasks"],
    ["methods"],
    ["run-study", "lambda_tau_sweep", "--dry-run"],
    ["run-study", "lambda_tau_sweep", "--profile", "nosuch"],  # an argument error
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine_header())
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    root = Path(__file__).resolve().parents[1]
    for command in COMMANDS:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "harness", *command], cwd=root, env=env, capture_output=True
            )
            times.append(time.perf_counter() - start)
        shown = " ".join(command)
        print(f"harness {shown:45s} median {statistics.median(times):6.2f} s  best {min(times):6.2f} s")


if __name__ == "__main__":
    main()
