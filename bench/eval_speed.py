"""STS suite speed: harness evaluation vs sentence-transformers' default path, same sentences, one process.

    .venv/bin/python bench/eval_speed.py [--text raw|senteval] [--batch-size 128] [--model DIR]

The reference encodes each task's first and second sentences with `SentenceTransformer.encode`
(normalised, its default batch size 32) and scores cosine Spearman with scipy, as MTEB does. The harness
encodes every distinct sentence once in token-count-sorted batches, padding-free; it is timed in fp32 and
with `auto` (whatever `harness.device.resolve_precision` picks here), without the embedding cache.
Prints the machine, the times, the ratios and the largest score difference from the reference.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import spearmanr
from steps import machine_header, precision_label

from harness.data.paths import resolve_data_dir
from harness.device import autocast_dtype, pick_device
from harness.encoders.encoder import Encoder, resolve_model_name
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks
from harness.evaluate.tasks.sts import STS_TASKS, load_sts_task


def reference(model_name: str, text: str) -> tuple[float, dict[str, float]]:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model_name(model_name), device=str(pick_device()))
    root = resolve_data_dir()
    start = time.perf_counter()
    scores = {}
    for task in STS_TASKS:
        subsets = load_sts_task(root, task, text)  # type: ignore[arg-type]
        left = model.encode([s for p in subsets for s in p.sent1], normalize_embeddings=True)
        right = model.encode([s for p in subsets for s in p.sent2], normalize_embeddings=True)
        gold = np.concatenate([p.scores for p in subsets])
        scores[task] = 100 * spearmanr((left * right).sum(axis=1), gold).statistic
    return time.perf_counter() - start, scores


def harness(model_name: str, text: str, precision: str, batch_size: int) -> tuple[float, dict[str, float]]:
    device = pick_device()
    encoder = Encoder(model_name, "mean", None).to(device)
    encode_fn = SentenceEncoder(encoder, batch_size, autocast_dtype(device, precision))  # type: ignore[arg-type]
    start = time.perf_counter()
    results = evaluate_tasks(encode_fn, resolve_data_dir(), STS_TASKS, text)  # type: ignore[arg-type]
    return time.perf_counter() - start, {t: float(r["spearman"]) for t, r in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text", default="raw", choices=["raw", "senteval"])
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--model", default="all-MiniLM-L6-v2", help="model directory or alias (mean pooling)")
    args = parser.parse_args()
    print(machine_header())
    ref_time, ref = reference(args.model, args.text)
    print(f"sentence-transformers encode + cosine: {ref_time:7.1f} s")
    for precision in ("fp32", "auto"):
        seconds, ours = harness(args.model, args.text, precision, args.batch_size)
        diff = max(abs(ours[t] - ref[t]) for t in STS_TASKS)
        print(
            f"harness {precision_label(precision):11s}: {seconds:7.1f} s  "
            f"speed-up {ref_time / seconds:4.2f}x  "
            f"largest |score difference| {diff:.4f}"
        )
    print("task            reference  harness(last)")
    for task in STS_TASKS:
        print(f"{task:16s} {ref[task]:9.2f} {ours[task]:9.2f}")


if __name__ == "__main__":
    main()
