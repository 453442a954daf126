from pathlib import Path

import pytest

from harness.data.senteval import read_sick, read_sts_subset, read_sts_year, read_stsb
from harness.errors import HarnessError

# Scored pairs and subsets, from ../shared/data/PROVENANCE.md.
STS_COUNTS = {12: (3108, 5), 13: (1500, 3), 14: (3750, 6), 15: (3000, 5), 16: (1186, 5)}


@pytest.mark.parametrize("variant", ["senteval", "raw"])
@pytest.mark.parametrize("year", sorted(STS_COUNTS))
def test_sts_year_counts(data_dir: Path, year: int, variant: str) -> None:
    subsets = read_sts_year(data_dir, year, variant)
    pairs, n_subsets = STS_COUNTS[year]
    assert len(subsets) == n_subsets
    assert sum(len(s) for s in subsets) == pairs
    for s in subsets:
        assert len(s.sent1) == len(s.sent2) == len(s.scores)
        assert s.scores.min() >= 0 and s.scores.max() <= 5


@pytest.mark.parametrize("variant", ["senteval", "raw"])
@pytest.mark.parametrize(("split", "count"), [("train", 5749), ("dev", 1500), ("test", 1379)])
def test_stsb_counts(data_dir: Path, split: str, count: int, variant: str) -> None:
    pairs = read_stsb(data_dir, split, variant)
    assert len(pairs) == count
    assert pairs.scores.min() >= 0 and pairs.scores.max() <= 5


def test_senteval_text_is_lowercased_raw_is_not(data_dir: Path) -> None:
    tokenized, raw = read_stsb(data_dir, "test", "senteval"), read_stsb(data_dir, "test", "raw")
    assert all(s == s.lower() for s in tokenized.sent1[:50])
    assert any(s != s.lower() for s in raw.sent1[:50])


@pytest.mark.parametrize(("split", "count"), [("train", 4500), ("dev", 500), ("test", 4927)])
def test_sick_counts(data_dir: Path, split: str, count: int) -> None:
    pairs = read_sick(data_dir, split)
    assert len(pairs) == count
    assert pairs.scores.min() >= 1 and pairs.scores.max() <= 5
    assert not any(s.endswith("\r") for s in pairs.sent2)


def _write_subset(folder: Path, inputs: str, gold: str | None) -> None:
    (folder / "STS.input.x.txt").write_text(inputs)
    if gold is not None:
        (folder / "STS.gs.x.txt").write_text(gold)


def test_unscored_pairs_are_skipped(tmp_path: Path) -> None:
    _write_subset(tmp_path, "a\tb\nc\td\ne\tf\n", "1.0\n\n4.5\n")
    pairs = read_sts_subset(tmp_path, "x")
    assert pairs.sent1 == ["a", "e"] and list(pairs.scores) == [1.0, 4.5]


@pytest.mark.parametrize(
    ("inputs", "gold", "message"),
    [
        ("a\tb\nc d\n", "1\n2\n", r"STS.input.x.txt:2: expected at least 2 tab-separated columns"),
        ("a\tb\nc\td\n", "1\nfive\n", r"STS.gs.x.txt:2: score 'five' is not a number"),
        ("a\tb\n", None, r"missing data file .*STS.gs.x.txt"),
    ],
)
def test_malformed_files_name_file_and_line(
    tmp_path: Path, inputs: str, gold: str | None, message: str
) -> None:
    _write_subset(tmp_path, inputs, gold)
    with pytest.raises(HarnessError, match=message):
        read_sts_subset(tmp_path, "x")
