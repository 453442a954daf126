"""The scikit-learn transfer probes with the machine's BLAS threads and with one (what the harness uses):
the scores of each and the seconds each took, on fixed random 384-d embeddings of each task's sentences.

    .venv/bin/python bench/probe_threads.py [TASK ...]      # default: TREC MRPC
"""

from __future__ import annotations

import sys
import time

import numpy as np
from steps import machine_header
from threadpoolctl import threadpool_info

from harness.data.paths import resolve_data_dir
from harness.data.transfer import read_transfer
from harness.evaluate.tasks import transfer


def main(tasks: list[str]) -> None:
    print(machine_header())
    print("BLAS:", [(pool["internal_api"], pool["num_threads"]) for pool in threadpool_info()])
    root = resolve_data_dir(None)
    for task in tasks:
        splits = read_transfer(root, task)
        texts = sorted({t for part in splits.values() for t in part.texts + (part.second or [])})
        vectors = np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32)
        embeddings = dict(zip(texts, vectors, strict=True))
        scores, seconds = {}, {}
        for label, limit in (("machine", False), ("one thread", True)):
            saved = transfer.one_blas_thread
            if not limit:  # the machine's default thread count
                transfer.one_blas_thread = lambda: transfer.contextlib.nullcontext()  # type: ignore[assignment]
            started = time.perf_counter()
            scores[label] = transfer.evaluate_transfer(task, splits, embeddings, 5)
            seconds[label] = time.perf_counter() - started
            transfer.one_blas_thread = saved
        print(f"{task}: machine threads {scores['machine']} in {seconds['machine']:.1f} s; "
              f"one thread {scores['one thread']} in {seconds['one thread']:.1f} s")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:] or ["TREC", "MRPC"])
