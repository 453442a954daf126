from pathlib import Path

import pytest

from harness.data.transfer import TRANSFER_TASKS, read_transfer
from harness.errors import HarnessError

# Sizes from ../shared/data/PROVENANCE.md.
COUNTS = {
    "MR": {"all": 10662}, "CR": {"all": 3775}, "SUBJ": {"all": 10000}, "MPQA": {"all": 10606},
    "SST2": {"train": 67349, "dev": 872, "test": 1821}, "SST5": {"train": 8544, "dev": 1101, "test": 2210},
    "TREC": {"train": 5452, "test": 500}, "MRPC": {"train": 4076, "test": 1725},
}  # fmt: skip
CLASSES = {"MR": 2, "CR": 2, "SUBJ": 2, "MPQA": 2, "SST2": 2, "SST5": 5, "TREC": 6, "MRPC": 2}


@pytest.mark.parametrize("task", TRANSFER_TASKS)
def test_transfer_counts_and_classes(data_dir: Path, task: str) -> None:
    splits = read_transfer(data_dir, task)
    assert {k: len(v) for k, v in splits.items()} == COUNTS[task]
    for data in splits.values():
        assert set(data.labels.tolist()) == set(range(CLASSES[task]))
        assert len(data.texts) == len(data.labels)
    if task == "MRPC":
        assert not splits["train"].texts[0].startswith("\ufeff") and len(splits["train"].second) == 4076


def test_malformed_sst_line_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "senteval" / "SST" / "fine"
    folder.mkdir(parents=True)
    (folder / "sentiment-train").write_text("3 a good film\nx bad label\n")
    with pytest.raises(HarnessError, match=r"sentiment-train:2: label 'x' is not an integer"):
        read_transfer(tmp_path, "SST5")


def test_unknown_task() -> None:
    with pytest.raises(HarnessError, match="unknown transfer task"):
        read_transfer(Path("."), "QQP")
