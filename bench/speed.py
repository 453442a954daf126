"""Time the hot paths of a trial: one SCL training step and the end-of-trial STS evaluation.

    .venv/bin/python bench/speed.py [--model all-MiniLM-L6-v2] [--steps 10] [--batch-size 64]

Prints the machine, seconds per training step and the STS suite's wall time and sentence throughput,
in fp32 and with `auto` (what `harness.device.resolve_precision` picks here). Uses the real data in
../shared/data (or HARNESS_DATA_DIR).
"""

from __future__ import annotations

import argparse
import random
import time

import torch
from steps import machine_header, mean_step_seconds, precision_label

from harness.data.nli import pack_batches, read_snli_local
from harness.data.paths import resolve_data_dir
from harness.device import autocast_dtype, pick_device
from harness.evaluate.encode import encode
from harness.evaluate.sts import STS_TASKS
from harness.evaluate.suite import evaluate_tasks, flat_metrics
from harness.methods.scl import SupervisedContrastiveNLI
from harness.model.encoder import Encoder
from harness.run_spec import resolve_run

PRECISIONS = ("fp32", "auto")


def time_steps(
    model: str, steps: int, batch_size: int, dtype: torch.dtype | None, device: torch.device
) -> float:
    run = resolve_run({"method": "scl", "lambda": 0.5, "tau": 0.1})
    torch.manual_seed(0)
    method = SupervisedContrastiveNLI(Encoder(model, "mean", 48), run.params).to(device).train()
    batches = pack_batches(read_snli_local(resolve_data_dir(), ["dev"]), batch_size, random.Random(0))
    batches = batches[: steps + 1]
    return mean_step_seconds(lambda b: method.loss(b)["loss"], batches, method.parameters(), device, dtype)


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
        seconds = time_steps(args.model, args.steps, args.batch_size, autocast_dtype(device, name), device)
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
