"""Time the commands a researcher types without training anything: each one a fresh process, as typed.

    .venv/bin/python bench/cli_speed.py [--repeats 3]

Prints the CPU, then the median and best wall time of each command (a new Python process each, so the
imports are counted), in a scratch HARNESS_HOME. Every command here should answer in under a second:
none imports torch, transformers or MLflow (tests/test_imports.py checks that).
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

from steps import machine_header

COMMANDS = [
    ["--help"],
    ["--version"],
    ["studies"],
    ["tasks"],
    ["methods"],
    ["run-study", "lambda_tau_sweep", "--dry-run"],
    ["run-study", "liao_main", "--profile", "paper", "--dry-run"],
    ["run-study", "supcl_seq_glue", "--dry-run"],
    # argument errors: each refused in one line before torch, transformers or MLflow load
    ["run-study", "lambda_tau_swep"],
    ["run-study", "lambda_tau_sweep", "--profile", "nosuch"],
    ["run-study", "lambda_tau_sweep", "--data-dir", "/no/such"],
    ["run-study", "lambda_tau_sweep", "--tracking-uri", "foo://bar"],
    ["run-study", "lambda_tau_sweep", "--profile", "paper"],  # the hub model is not here (offline)
    ["run-study", "lambda_tau_sweep", "--profile", "smoke", "--workers", "0"],
    ["run-study", "lambda_tau_sweep", "--profile", "smoke", "--storage", "postgresql://u:p@127.0.0.1:9/d"],
    ["worker", "lambda_tau_sweep", "--profile", "smoke"],
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine_header())
    home = tempfile.mkdtemp(prefix="cli-speed-")  # no study state: the worker finds no journal
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HARNESS_HOME": home}
    root = Path(__file__).resolve().parents[1]
    for command in COMMANDS:
        times, code = [], 0
        for _ in range(args.repeats):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "harness", *command], cwd=root, env=env, capture_output=True
            )
            times.append(time.perf_counter() - start)
            code = done.returncode
        median, best = statistics.median(times), min(times)
        print(f"harness {' '.join(command):72s} exit {code} median {median:5.2f} s best {best:5.2f} s")


if __name__ == "__main__":
    main()
