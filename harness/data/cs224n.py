"""The CS224N multi-task data (../shared/data/cs224n): SST-5 sentiment, Quora paraphrase, STS-B similarity.

Tab-separated with a leading index column and a header (`id sentence sentiment`, `id sentence1 sentence2
is_duplicate`, `id sentence1 sentence2 similarity`), quoted like CSV. The full quora-train.csv (141k pairs)
is not available offline: `quora_splits` splits quora-dev.csv into train / dev with a fixed seed, or reads
a user-given quora-train.csv.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from harness.data.lineage import cached_reader
from harness.data.paths import require_file
from harness.errors import HarnessError


@dataclass(frozen=True)
class Sentences:
    """Single sentences with integer labels (SST-5: 0-4)."""

    texts: list[str]
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, index: list[int]) -> Sentences:
        return Sentences([self.texts[i] for i in index], self.labels[index])


@dataclass(frozen=True)
class Pairs:
    """Sentence pairs with a float target (Quora: 0/1, STS: 0-5)."""

    first: list[str]
    second: list[str]
    targets: np.ndarray

    def __len__(self) -> int:
        return len(self.targets)

    def subset(self, index: list[int]) -> Pairs:
        return Pairs([self.first[i] for i in index], [self.second[i] for i in index], self.targets[index])


def _rows(path: Path, columns: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    with require_file(path).open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
        if missing:
            raise HarnessError(f"{path}: header lacks column(s) {', '.join(missing)}")
        return [(line, row) for line, row in enumerate(reader, start=2)]


def _number(text: str | None, path: Path, line: int) -> float | None:
    if text is None or not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise HarnessError(f"{path}:{line}: {text!r} is not a number") from None


def read_sst(path: Path) -> Sentences:
    texts, labels = [], []
    for line, row in _rows(path, ("sentence", "sentiment")):
        label = _number(row["sentiment"], path, line)
        if label is None:
            raise HarnessError(f"{path}:{line}: missing sentiment label")
        texts.append(row["sentence"].strip())
        labels.append(int(label))
    return Sentences(texts, np.array(labels))


def read_pairs(path: Path, target: str) -> Pairs:
    """Pairs with `target` (is_duplicate or similarity); rows with an empty target are skipped."""
    first, second, targets = [], [], []
    for line, row in _rows(path, ("sentence1", "sentence2", target)):
        value = _number(row[target], path, line)
        if value is None:
            continue
        first.append(row["sentence1"].strip())
        second.append(row["sentence2"].strip())
        targets.append(value)
    return Pairs(first, second, np.array(targets, dtype=np.float64))


def quora_splits(
    root: Path, train_path: Path | None = None, dev_fraction: float = 0.2, seed: int = 11711
) -> tuple[Pairs, Pairs]:
    """(train, dev) Quora pairs: quora-train.csv + quora-dev.csv when `train_path` is given, else
    quora-dev.csv split by a fixed seed (20% dev)."""
    dev = read_pairs(root / "cs224n" / "quora-dev.csv", "is_duplicate")
    if train_path is not None:
        return read_pairs(train_path, "is_duplicate"), dev
    order = list(range(len(dev)))
    random.Random(seed).shuffle(order)
    cut = int(len(order) * dev_fraction)
    return dev.subset(sorted(order[cut:])), dev.subset(sorted(order[:cut]))


@dataclass(frozen=True)
class MultitaskData:
    sst_train: Sentences
    sst_dev: Sentences
    quora_train: Pairs
    quora_dev: Pairs
    sts_train: Pairs
    sts_dev: Pairs


def train_as_dev(data: MultitaskData, size: int, seed: int = 0) -> MultitaskData:
    """The same sets with each task's dev split replaced by `size` training examples drawn at random (a
    fixed draw; all of them when fewer): scoring it gives training-set accuracy."""

    def draw(count: int) -> list[int]:
        return sorted(random.Random(seed).sample(range(count), min(size, count)))

    return replace(
        data,
        sst_dev=data.sst_train.subset(draw(len(data.sst_train))),
        quora_dev=data.quora_train.subset(draw(len(data.quora_train))),
        sts_dev=data.sts_train.subset(draw(len(data.sts_train))),
    )


def read_multitask(root: Path, quora_train: Path | None = None) -> MultitaskData:
    base = root / "cs224n"
    q_train, q_dev = quora_splits(root, quora_train)
    return MultitaskData(
        read_sst(base / "ids-sst-train.csv"), read_sst(base / "ids-sst-dev.csv"), q_train, q_dev,
        read_pairs(base / "sts-train.csv", "similarity"), read_pairs(base / "sts-dev.csv", "similarity"),
    )  # fmt: skip


@cached_reader(maxsize=2)
def multitask_data(root: Path, quora_train: str | None = None) -> MultitaskData:
    """`read_multitask`, cached per process (every stage and scorer of a trial reads the same sets)."""
    return read_multitask(root, Path(quora_train) if quora_train else None)
