"""The one evaluation path: `harness eval` and the end of every study trial both call `evaluate_tasks`.

Every distinct sentence of every requested task is encoded once (length-sorted batches, autocast,
optionally through the content-addressed cache), then each task is scored from those embeddings.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from harness.data.senteval import STSPairs, Variant
from harness.data.transfer import TRANSFER_TASKS, Labelled, read_transfer
from harness.errors import HarnessError
from harness.evaluate.cache import EmbeddingCache, TrialCache, fingerprint
from harness.evaluate.encode import encode
from harness.evaluate.geometry import geometry
from harness.evaluate.sts import STS_TASKS, load_sts_task, score_task
from harness.evaluate.transfer import PRESETS, evaluate_transfer
from harness.model.encoder import Encoder

GEOMETRY = "AlignUniform"
STSB_SPLITS = {"STSBenchmark": "test", "STSBenchmark-dev": "dev", "STSBenchmark-train": "train"}
SUITES: dict[str, tuple[str, ...]] = {
    "sts": STS_TASKS,
    "transfer": TRANSFER_TASKS,
    "full": (*STS_TASKS, *TRANSFER_TASKS, GEOMETRY),
}
ALL_TASKS: tuple[str, ...] = (*STS_TASKS, "STSBenchmark-dev", "STSBenchmark-train", *TRANSFER_TASKS, GEOMETRY)

Embeddings = dict[str, np.ndarray]
EncodeFn = Callable[[list[str]], Embeddings]


def resolve_tasks(tasks: str | Sequence[str] | None = None, suite: str | None = None) -> list[str]:
    """Task names from a comma list or a suite name; unknown names get close matches."""
    if tasks:
        names = [t.strip() for t in tasks.split(",")] if isinstance(tasks, str) else list(tasks)
        for name in names:
            if name not in ALL_TASKS:
                close = difflib.get_close_matches(name, ALL_TASKS, n=3, cutoff=0.5)
                hint = f"did you mean {', '.join(close)}?" if close else f"choose from {', '.join(ALL_TASKS)}"
                raise HarnessError(f"unknown task {name!r}; {hint}")
        return names
    suite = suite or "sts"
    if suite not in SUITES:
        raise HarnessError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    return list(SUITES[suite])


@functools.lru_cache(maxsize=16)
def _transfer(data_dir: Path, task: str) -> dict[str, Labelled]:
    return read_transfer(data_dir, task)


def load_task(data_dir: Path, task: str, variant: Variant) -> Sequence[STSPairs] | dict[str, Labelled]:
    if task in STSB_SPLITS:
        return load_sts_task(data_dir, "STSBenchmark", variant, STSB_SPLITS[task])
    if task in STS_TASKS:
        return load_sts_task(data_dir, task, variant)
    if task == GEOMETRY:
        return load_sts_task(data_dir, "STSBenchmark", variant, "dev")
    return _transfer(data_dir, task)


def _sentences(data: Sequence[STSPairs] | dict[str, Labelled]) -> set[str]:
    parts = data.values() if isinstance(data, dict) else data
    out: set[str] = set()
    for part in parts:
        out.update(part.sentences() if isinstance(part, Labelled) else (*part.sent1, *part.sent2))
    return out


def evaluate_tasks(
    encode_fn: EncodeFn,
    data_dir: Path,
    tasks: Sequence[str],
    variant: Variant = "senteval",
    preset: str = "prototyping",
) -> dict[str, dict[str, object]]:
    """Scores per task, in the JSON shape of `harness eval` (Spearman / accuracy x 100)."""
    if preset not in PRESETS:
        raise HarnessError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    data = {task: load_task(data_dir, task, variant) for task in tasks}
    embeddings = encode_fn(sorted(set().union(*(_sentences(d) for d in data.values()))))
    results: dict[str, dict[str, object]] = {}
    for task, task_data in data.items():
        if task == GEOMETRY:
            results[task] = geometry(task_data[0], embeddings)
        elif isinstance(task_data, dict):
            results[task] = evaluate_transfer(task, task_data, embeddings, PRESETS[preset])
        else:
            results[task] = score_task(task_data, embeddings)
    return results


def flat_metrics(results: dict[str, dict[str, object]]) -> dict[str, float]:
    """MLflow metric names `<task>.<score>` plus `STS.avg` (mean Spearman of the STS tasks present,
    SimCSE's Avg.) and `transfer.avg` (mean accuracy of the transfer tasks present)."""
    metrics = {
        f"{task}.{key}": float(value)
        for task, scores in results.items()
        for key, value in scores.items()
        if isinstance(value, int | float) and key != "n"
    }
    sts = [float(results[t]["spearman"]) for t in STS_TASKS if t in results]
    transfer = [float(results[t]["acc"]) for t in TRANSFER_TASKS if t in results]
    if sts:
        metrics["STS.avg"] = float(np.mean(sts))
    if transfer:
        metrics["transfer.avg"] = float(np.mean(transfer))
    return metrics


class SentenceEncoder:
    """sentences -> {sentence: embedding} for one encoder, optionally through the embedding cache."""

    def __init__(
        self,
        encoder: Encoder,
        batch_size: int = 128,
        amp_dtype: torch.dtype | None = None,
        cache: EmbeddingCache | TrialCache | None = None,
        progress: bool = False,
    ) -> None:
        self.encoder, self.batch_size, self.amp_dtype = encoder, batch_size, amp_dtype
        self.cache, self.progress = cache, progress

    def key(self) -> str:
        """The cache key of the encoder's current weights and of how it embeds."""
        return fingerprint(
            self.encoder,
            pooling=self.encoder.pooling,
            max_length=self.encoder.max_length,
            dtype=self.amp_dtype,
        )

    def __call__(self, sentences: list[str]) -> Embeddings:
        if self.cache is None:
            return encode(self.encoder, sentences, self.batch_size, self.amp_dtype, self.progress)
        key = self.key()
        stored = self.cache.load(key)
        missing = [s for s in sentences if s not in stored]
        if missing:
            stored.update(encode(self.encoder, missing, self.batch_size, self.amp_dtype, self.progress))
            self.cache.save(key, stored)
        return {s: stored[s] for s in sentences}
