"""Time the hot paths of a trial: one SCL training step and the end-of-trial STS evaluation.

    .venv/bin/python bench/speed.py [--model all-MiniLM-L6-v2] [--steps 10] [--batch-size 64]

Prints the machine, seconds per training step and the STS suite's wall time and sentence throughput,
in fp32 and with `auto` (what `harness.device.resolve_precision` picks here). Uses the real data in
../shared/data (or HARNESS_DATA_DIR).
"""

from __future__ import annotations

import argparse
import time

import torch
from steps import loop_step_seconds, machine_header, precision_label

from harness.data.paths import resolve_data_dir
from harness.device import autocast_dtype, pick_device
from harness.encoders.encoder import Encoder
from harness.evaluate.encode import encode
from harness.evaluate.suite import evaluate_tasks, flat_metrics
from harness.evaluate.tasks.sts import STS_TASKS

PRECISIONS = ("fp32", "auto")


def time_steps(model: str, steps: int, batch_size: int, precision: str) -> float:
    """The `scl` method's step (lambda 0.5, tau 0.1) on local SNLI dev, mean pooling, max length 48."""
    config = {"method": "scl", "lambda": 0.5, "tau": 0.1, "model": model, "pooling": "mean",
              "max_seq_length": 48, "batch_size": batch_size, "train_data": "snli_local",
              "snli_splits": ["dev"], "precision": precision}  # fmt: skip
    return loop_step_seconds(config, steps)[0]


def time_sts(model: str, dtype: torch.dtype | None, device: torch.device) -> tuple[float, int, float]:
    encoder = Encoder(model, "mean", 128).to(device)
    sentences: set[str] = set()
    start = time.perf_counter()
    results = evaluate_tasks(
        lambda s: (sentences.update(s), encode(encoder, s, 128, dtype))[1], resolve_data_dir(), STS_TASKS
    )
    return time.perf_counter() - start, len(sentences), flat_metrics(results)["STS.avg"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--skip-eval", action="store_true")
    args = parser.parse_args()
    device = pick_device()
    print(f"{machine_header()}; model {args.model}")
    for name in PRECISIONS:
        seconds = time_steps(args.model, args.steps, args.batch_size, name)
        print(
            f"SCL train step  {precision_label(name)}: {seconds:.3f} s/step  (batch {args.batch_size} pairs)"
        )
    if args.skip_eval:
        return
    for name in PRECISIONS:
        seconds, n, avg = time_sts(args.model, autocast_dtype(device, name), device)
        print(
            f"STS suite eval  {precision_label(name)}: {seconds:.1f} s for {n} sentences "
            f"({n / seconds:.0f}/s), "
            f"avg {avg:.2f}"
        )


if __name__ == "__main__":
    main()
