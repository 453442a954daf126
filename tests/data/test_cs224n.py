from pathlib import Path

import pytest

from harness.data.cs224n import quora_splits, read_multitask, read_pairs
from harness.errors import HarnessError


def test_counts_from_provenance(data_dir: Path) -> None:
    data = read_multitask(data_dir)
    assert (len(data.sst_train), len(data.sst_dev)) == (8544, 1101)
    assert (len(data.sts_train), len(data.sts_dev)) == (6040, 863)
    assert len(data.quora_train) + len(data.quora_dev) == 20212  # 20214 pairs, 2 without a label
    assert set(data.sst_train.labels.tolist()) == {0, 1, 2, 3, 4}
    assert set(data.quora_dev.targets.tolist()) == {0.0, 1.0}
    assert data.sts_dev.targets.min() >= 0.0 and data.sts_dev.targets.max() <= 5.0


def test_quora_split_is_fixed_and_disjoint(data_dir: Path) -> None:
    train, dev = quora_splits(data_dir)
    again_train, _ = quora_splits(data_dir)
    assert train.first == again_train.first
    train_pairs = set(zip(train.first, train.second, strict=True))
    assert len(dev) == 4042 and not train_pairs & set(zip(dev.first, dev.second, strict=True))


def test_bad_number_names_line(tmp_path: Path) -> None:
    path = tmp_path / "sts.csv"
    path.write_text("\tid\tsentence1\tsentence2\tsimilarity\n0\ta\tx\ty\tfour\n")
    with pytest.raises(HarnessError, match=r"sts.csv:2: 'four' is not a number"):
        read_pairs(path, "similarity")
