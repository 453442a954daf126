"""The full garbage collection Optuna runs after each trial (`gc_after_trial`), before and after
`harness.study.runner.freeze_what_is_loaded()` (gc.freeze of what imports created), in one worker-like
process.

    .venv/bin/python bench/gc_after_trial.py
"""

from __future__ import annotations

import gc
import platform
import time

import mlflow  # noqa: F401
import torch
import transformers  # noqa: F401

import harness.study.runner
import harness.study.trial  # noqa: F401


def best_of(repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - started)
    return min(times)


if __name__ == "__main__":
    machine = platform.processor() or platform.machine()
    print(f"{machine}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"objects tracked: {len(gc.get_objects())}")
    print(f"gc.collect() unfrozen: {best_of() * 1000:.1f} ms")
    harness.study.runner.freeze_what_is_loaded()
    print(f"gc.collect() after freeze_what_is_loaded(): {best_of() * 1000:.3f} ms")
