"""What a `harness` process spends after its command has ended: Python's finalisation (its last full
garbage collection over every object the imports made) with and without `harness.commands.cli`'s
`skip_the_final_collection()`, and `os._exit` (no finalisation at all) as the floor. Each variant is a
new process that imports what a worker imports and exits; the import time is measured inside it, so
the difference of wall times is the exit's.

    .venv/bin/python bench/exit_cost.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

IMPORTS = "import harness.study.runner, harness.study.trial, harness.commands.cli"
VARIANTS = {  # what the process does after its imports
    "plain exit": "pass",
    "skip_the_final_collection()": "harness.commands.cli.skip_the_final_collection()",
    "os._exit(0) (floor)": "import os; os._exit(0)",
}


def exit_seconds(tail: str) -> float:
    """Wall time of the process minus the time its imports took (printed by the process itself)."""
    timed = f"import time; t = time.perf_counter(); {IMPORTS}; print(time.perf_counter() - t, flush=True)"
    timed += f"; {tail}"
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True, check=True)
    return time.perf_counter() - started - float(out.stdout.split()[0])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    lines = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    models = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
    print(f"CPU: {(models or [platform.processor()])[0]}; seconds from the imports' end to the process's end")
    print(f"(best of {args.repeats})")
    for name, code in VARIANTS.items():
        best = min(exit_seconds(code) for _ in range(args.repeats))
        print(f"  {name:30s} {best:5.2f} s")
