"""Readers for the STS files in SentEval's layout (and the raw cased originals).

Variants: `senteval` reads `senteval/STS/...` (Moses-tokenized, lowercased: what SimCSE evaluates);
`raw` reads `sts-raw/...` (the organisers' cased text). MTEB's STS-B is the raw text, its STS12-16 the
SentEval one (harness.evaluate.mteb_results). SICK exists only in the
SentEval layout. Unscored pairs (an empty gold line) are skipped, as SentEval does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.choices import TextVariant
from harness.data.paths import require_file
from harness.errors import HarnessError

Variant = TextVariant
STS_YEARS = (12, 13, 14, 15, 16)


@dataclass(frozen=True)
class STSPairs:
    """Sentence pairs with gold similarity scores (0-5 for STS, 1-5 for SICK)."""

    name: str
    sent1: list[str]
    sent2: list[str]
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


def _read_lines(path: Path) -> list[str]:
    require_file(path)
    return path.read_text(encoding="utf-8").splitlines()


def _score(text: str, path: Path, line_no: int) -> float:
    try:
        return float(text)
    except ValueError:
        raise HarnessError(
            f"{path}:{line_no}: score {text!r} is not a number; fix or replace the file"
        ) from None


def _columns(line: str, path: Path, line_no: int, needed: int) -> list[str]:
    cols = line.split("\t")
    if len(cols) < needed:
        raise HarnessError(
            f"{path}:{line_no}: expected at least {needed} tab-separated columns, found {len(cols)}"
        )
    return cols


def sts_year_dir(root: Path, year: int, variant: Variant) -> Path:
    if variant == "senteval":
        return root / "senteval" / "STS" / f"STS{year}-en-test"
    return root / "sts-raw" / f"STS{year}"


def read_sts_subset(directory: Path, subset: str) -> STSPairs:
    """One STS subset: `STS.input.<subset>.txt` (pair per line) + `STS.gs.<subset>.txt` (gold)."""
    input_path = directory / f"STS.input.{subset}.txt"
    gold_path = directory / f"STS.gs.{subset}.txt"
    inputs, golds = _read_lines(input_path), _read_lines(gold_path)
    if len(inputs) != len(golds):
        raise HarnessError(
            f"{gold_path}: {len(golds)} gold lines for {len(inputs)} pairs in {input_path.name}"
        )
    sent1, sent2, scores = [], [], []
    for line_no, (pair, gold) in enumerate(zip(inputs, golds, strict=True), start=1):
        if not gold.strip():
            continue
        cols = _columns(pair, input_path, line_no, 2)
        sent1.append(cols[0])
        sent2.append(cols[1])
        scores.append(_score(gold.strip(), gold_path, line_no))
    return STSPairs(subset, sent1, sent2, np.asarray(scores, dtype=np.float64))


def read_sts_year(root: Path, year: int, variant: Variant = "senteval") -> list[STSPairs]:
    """Every subset of STS{year}, in sorted order."""
    directory = sts_year_dir(root, year, variant)
    if not directory.is_dir():
        raise HarnessError(f"missing STS directory {directory}; check --data-dir or HARNESS_DATA_DIR")
    subsets = sorted(p.name[len("STS.input.") : -len(".txt")] for p in directory.glob("STS.input.*.txt"))
    if not subsets:
        raise HarnessError(f"no STS.input.*.txt files in {directory}")
    return [read_sts_subset(directory, s) for s in subsets]


def read_stsb(root: Path, split: str, variant: Variant = "senteval") -> STSPairs:
    """STS Benchmark: tab-separated, score in column 5, sentences in columns 6 and 7."""
    base = (
        root / "senteval" / "STS" / "STSBenchmark"
        if variant == "senteval"
        else root / "sts-raw" / "STSBenchmark"
    )
    path = base / f"sts-{split}.csv"
    sent1, sent2, scores = [], [], []
    for line_no, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        cols = _columns(line, path, line_no, 7)
        scores.append(_score(cols[4], path, line_no))
        sent1.append(cols[5])
        sent2.append(cols[6])
    return STSPairs(f"STSBenchmark-{split}", sent1, sent2, np.asarray(scores, dtype=np.float64))


def read_sick(root: Path, split: str = "test") -> STSPairs:
    """SICK relatedness: header row, then pair_ID, sentence_A, sentence_B, relatedness_score, ..."""
    name = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}[split]
    path = root / "senteval" / "SICK" / name
    sent1, sent2, scores = [], [], []
    for line_no, line in enumerate(_read_lines(path)[1:], start=2):
        if not line.strip():
            continue
        cols = _columns(line, path, line_no, 4)
        sent1.append(cols[1])
        sent2.append(cols[2])
        scores.append(_score(cols[3], path, line_no))
    return STSPairs(f"SICK-{split}", sent1, sent2, np.asarray(scores, dtype=np.float64))
