"""The one evaluation path: `harness eval` and the end of every study trial both call `evaluate_tasks`.

Every distinct sentence of every requested task is encoded once (length-sorted batches, autocast,
optionally through the content-addressed cache), then each task is scored from those embeddings. The
tasks, suites and aggregates come from the registry (harness.evaluate.registry, tasks/ one file per
family). The scorers' per-item records go to the caller's collector (`take_items`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from harness.data.senteval import Variant
from harness.errors import HarnessError
from harness.evaluate.registry import ScoreOptions, aggregates, get_task, suite_tasks, take_items
from harness.evaluate.tasks.transfer import PRESETS

if TYPE_CHECKING:  # torch is imported where sentences are encoded: task lists and checks need none
    import pandas as pd
    import torch

    from harness.evaluate.encode import Embedder, EmbeddingCache, TrialCache

Embeddings = dict[str, np.ndarray]
EncodeFn = Callable[[list[str]], Embeddings]


def resolve_tasks(names: str | Sequence[str] | None = None, suite: str | None = None) -> list[str]:
    """Task names from a comma list or a suite name (default `sts`); unknown names get close matches."""
    if names is not None:
        listed = [t.strip() for t in names.split(",")] if isinstance(names, str) else list(names)
        listed = [t for t in listed if t]
        if not listed:
            raise HarnessError("no task given; name tasks (see `harness tasks`) or a --suite")
        for name in listed:
            get_task(name)
        return listed
    return list(suite_tasks(suite or "sts"))


def evaluate_tasks(
    encode_fn: EncodeFn,
    data_dir: Path,
    names: Sequence[str],
    variant: Variant = "senteval",
    preset: str = "prototyping",
    classifier: str = "sklearn",
    seconds: dict[str, float] | None = None,
    items: list[pd.DataFrame] | None = None,
    limit: int | None = None,
) -> dict[str, dict[str, object]]:
    """Scores per task, in the JSON shape of `harness eval`: every distinct sentence of every task is
    encoded once, then each task's scorer runs on those embeddings. SentEval's PyTorch classifier runs
    where the encoder does (`encode_fn.device`; SentEval moves it to CUDA). `seconds`, when given, gets
    the wall time of the encoding (`encode`) and of each task's scoring (its record's included); `items`,
    when given, each task's per-item record (harness.stats.items), in the tasks' order; `limit`: each
    subset or split cut to a fixed sample of that many items (harness.evaluate.limit)."""
    if preset not in PRESETS:
        raise HarnessError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    seconds = {} if seconds is None else seconds
    chosen = [get_task(name) for name in names]
    data = {task.name: task.load(data_dir, variant) for task in chosen}
    if limit is not None:
        from harness.evaluate.limit import limited

        data = {name: limited(loaded, limit) for name, loaded in data.items()}
    sentences: set[str] = set()
    for task in chosen:
        sentences.update(task.sentences(data[task.name]))
    start = time.perf_counter()
    embeddings = encode_fn(sorted(sentences))
    seconds["encode"] = time.perf_counter() - start
    options = ScoreOptions(preset, classifier, str(getattr(encode_fn, "device", "cpu")))
    results = {}
    for task in chosen:
        start = time.perf_counter()
        results[task.name] = take_items(task.score(data[task.name], embeddings, options), items)
        seconds[task.name] = time.perf_counter() - start
    return results


def flat_metrics(results: dict[str, dict[str, object]]) -> dict[str, float]:
    """MLflow metric names `<task>.<score>` plus every declared aggregate whose members are all
    present (`STS.avg`: SimCSE's Avg.; `transfer.avg`)."""
    metrics = {
        f"{task}.{key}": float(value)
        for task, scores in results.items()
        for key, value in scores.items()
        if isinstance(value, int | float) and key != "n"
    }
    for name, aggregate in aggregates().items():
        value = aggregate.value(results)
        if value is not None:
            metrics[name] = value
    return metrics


def flat_metric_names(names: Sequence[str]) -> set[str]:
    """The names `flat_metrics` gives an evaluation of the tasks `names`, known before it runs: each
    task's declared scores, and the aggregates whose members are all evaluated with the aggregate's
    score."""
    scores = {name: get_task(name).scores for name in names}
    metrics = {f"{name}.{score}" for name, declared in scores.items() for score in declared}
    for aggregate in aggregates().values():
        if all(m in scores and aggregate.score in scores[m] for m in aggregate.members):
            metrics.add(aggregate.name)
    return metrics


class SentenceEncoder:
    """sentences -> {sentence: embedding} for one encoder, optionally through the embedding cache."""

    def __init__(
        self,
        encoder: Embedder,
        batch_size: int = 128,
        amp_dtype: torch.dtype | None = None,
        cache: EmbeddingCache | TrialCache | None = None,
        progress: bool = False,
    ) -> None:
        self.encoder, self.batch_size, self.amp_dtype = encoder, batch_size, amp_dtype
        self.cache, self.progress = cache, progress

    @property
    def device(self) -> torch.device:
        """Where the encoder runs."""
        return self.encoder.device

    def key(self) -> str:
        """The cache key of the encoder's current weights and of how it embeds."""
        from harness.evaluate.encode import fingerprint

        return fingerprint(
            self.encoder,
            pooling=self.encoder.pooling,
            normalize=getattr(self.encoder, "normalize", False),
            max_length=self.encoder.eval_length,
            dtype=self.amp_dtype,
        )

    def __call__(self, sentences: list[str]) -> Embeddings:
        from harness.evaluate.encode import encode

        if self.cache is None:
            return encode(self.encoder, sentences, self.batch_size, self.amp_dtype, self.progress)
        key = self.key()
        stored = self.cache.load(key)
        missing = [s for s in sentences if s not in stored]
        if missing:
            stored.update(encode(self.encoder, missing, self.batch_size, self.amp_dtype, self.progress))
            self.cache.save(key, stored)
        return {s: stored[s] for s in sentences}
