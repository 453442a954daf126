"""SentEval's transfer tasks (Conneau & Kiela, 2018): a logistic-regression probe on frozen embeddings,
accuracy x 100 (harness.evaluate.transfer); `transfer.avg` is the mean over the eight."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from harness.data.transfer import TRANSFER_TASKS, Labelled, read_transfer
from harness.evaluate.registry import ScoreOptions, declare_aggregate, declare_suite, register_task
from harness.evaluate.tasks.geometry import GEOMETRY
from harness.evaluate.tasks.sts import STS_TEST
from harness.evaluate.transfer import PRESETS, evaluate_transfer, probe_for

SPLITS = {"SST2": ("train", "dev", "test"), "SST5": ("train", "dev", "test"), "TREC": ("train", "test"),
          "MRPC": ("train", "test")}  # fmt: skip


@functools.lru_cache(maxsize=16)
def _read(data_dir: Path, task: str) -> dict[str, Labelled]:
    return read_transfer(data_dir, task)


def labelled_sentences(splits: dict[str, Labelled]) -> Iterable[str]:
    return {s for part in splits.values() for s in part.sentences()}


def _scorer(task: str):  # noqa: ANN202
    def score(splits: dict[str, Labelled], embeddings: dict, options: ScoreOptions) -> dict[str, object]:
        probe = probe_for(options.classifier, options.device)
        return evaluate_transfer(task, splits, embeddings, PRESETS[options.preset], probe)

    return score


for _name in TRANSFER_TASKS:
    register_task(
        _name, kind="classification", sentences=labelled_sentences, scorer=_scorer(_name), main_score="acc",
        splits=SPLITS.get(_name, ("all",)), description=f"SentEval {_name}: logistic-regression accuracy",
        scores=("acc", "devacc", "f1") if _name == "MRPC" else ("acc", "devacc"),  # evaluate_transfer's
    )(lambda data_dir, variant, task=_name: _read(data_dir, task))  # fmt: skip

declare_aggregate("transfer.avg", TRANSFER_TASKS, "acc", "mean accuracy of the eight transfer tasks")
declare_suite("transfer", TRANSFER_TASKS)
declare_suite("full", (*STS_TEST, *TRANSFER_TASKS, GEOMETRY))
