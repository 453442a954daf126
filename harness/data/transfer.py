"""Readers for SentEval's transfer tasks, as SentEval reads them (../shared/data/senteval/...).

MR, CR, SUBJ, MPQA: one sentence a line in a positive and a negative file (labels 1 / 0).
SST2: `sentence<TAB>label`; SST5: `label sentence` (0-4); both with fixed train / dev / test.
TREC: `COARSE:fine question` (latin-1), 6 coarse classes, train_5500 / TREC_10.
MRPC: header (UTF-8 BOM), then `quality<TAB>id1<TAB>id2<TAB>s1<TAB>s2`; train / test.
Sentences are whitespace-normalised (SentEval splits them into tokens and SimCSE joins them with spaces).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.data.paths import require_file
from harness.errors import HarnessError

BINARY_FILES = {
    "MR": ("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
    "CR": ("CR/custrev.pos", "CR/custrev.neg"),
    "SUBJ": ("SUBJ/subj.objective", "SUBJ/subj.subjective"),
    "MPQA": ("MPQA/mpqa.pos", "MPQA/mpqa.neg"),
}
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")
TRANSFER_TASKS: tuple[str, ...] = ("MR", "CR", "SUBJ", "MPQA", "SST2", "SST5", "TREC", "MRPC")


@dataclass(frozen=True)
class Labelled:
    """Sentences (or sentence pairs, when `second` is set) with integer labels."""

    texts: list[str]
    labels: np.ndarray
    second: list[str] | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def sentences(self) -> list[str]:
        return self.texts + (self.second or [])


def _clean(text: str) -> str:
    return " ".join(text.split())


def _lines(path: Path, encoding: str = "utf-8") -> list[str]:
    return require_file(path).read_text(encoding=encoding).splitlines()


def _int(text: str, path: Path, line_no: int) -> int:
    try:
        return int(text)
    except ValueError:
        raise HarnessError(f"{path}:{line_no}: label {text!r} is not an integer") from None


def read_binary(root: Path, task: str) -> Labelled:
    """MR / CR / SUBJ / MPQA: first file labelled 1, second 0. Empty lines stay (as empty sentences),
    as in SentEval, so the counts match its papers (CR 3775, MPQA 10606)."""
    first, second = (root / "senteval" / name for name in BINARY_FILES[task])
    pos = [_clean(x) for x in _lines(first)]
    neg = [_clean(x) for x in _lines(second)]
    return Labelled(pos + neg, np.array([1] * len(pos) + [0] * len(neg)))


def read_sst(root: Path, fine: bool = False) -> dict[str, Labelled]:
    """SST2 (`sentence<TAB>label`) or SST5 (`label sentence`) train / dev / test."""
    splits = {}
    for split in ("train", "dev", "test"):
        path = root / "senteval" / "SST" / ("fine" if fine else "binary") / f"sentiment-{split}"
        texts, labels = [], []
        for line_no, line in enumerate(_lines(path), start=1):
            if not line.strip():
                continue
            if fine:
                label, _, text = line.strip().partition(" ")
            else:
                text, _, label = line.strip().rpartition("\t")
            if not text:
                raise HarnessError(f"{path}:{line_no}: expected a sentence and a label")
            texts.append(_clean(text))
            labels.append(_int(label, path, line_no))
        splits[split] = Labelled(texts, np.array(labels))
    return splits


def read_trec(root: Path) -> dict[str, Labelled]:
    """TREC coarse classes; the files are latin-1."""
    splits = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        path = root / "senteval" / "TREC" / name
        texts, labels = [], []
        for line_no, line in enumerate(_lines(path, "latin-1"), start=1):
            if not line.strip():
                continue
            target, _, rest = line.strip().partition(":")
            if target not in TREC_CLASSES or " " not in rest:
                raise HarnessError(f"{path}:{line_no}: expected 'CLASS:fine question', got {line[:40]!r}")
            texts.append(_clean(rest.split(" ", 1)[1]))
            labels.append(TREC_CLASSES.index(target))
        splits[split] = Labelled(texts, np.array(labels))
    return splits


def read_mrpc(root: Path) -> dict[str, Labelled]:
    """MRPC sentence pairs, label 1 = paraphrase."""
    splits = {}
    for split in ("train", "test"):
        path = root / "senteval" / "MRPC" / f"msr_paraphrase_{split}.txt"
        first, second, labels = [], [], []
        for line_no, line in enumerate(_lines(path, "utf-8-sig")[1:], start=2):
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) < 5:
                raise HarnessError(f"{path}:{line_no}: expected 5 tab-separated columns, found {len(cols)}")
            labels.append(_int(cols[0], path, line_no))
            first.append(_clean(cols[3]))
            second.append(_clean(cols[4]))
        splits[split] = Labelled(first, np.array(labels), second)
    return splits


def read_transfer(root: Path, task: str) -> dict[str, Labelled]:
    """Any transfer task as named splits: `all` for the k-fold tasks, else train / (dev) / test."""
    if task in BINARY_FILES:
        return {"all": read_binary(root, task)}
    if task in ("SST2", "SST5"):
        return read_sst(root, fine=task == "SST5")
    if task == "TREC":
        return read_trec(root)
    if task == "MRPC":
        return read_mrpc(root)
    raise HarnessError(f"unknown transfer task {task!r}; choose from {', '.join(TRANSFER_TASKS)}")
