"""GLUE readers: row counts as PROVENANCE-glue.md lists them (read with quoting off), labels mapped."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.data.glue import read_glue
from harness.errors import HarnessError


@pytest.mark.parametrize(
    ("task", "split", "rows", "pairs"),
    [("CoLA", "dev", 1043, False), ("MRPC", "train", 3668, True), ("MRPC", "dev", 408, True),
     ("RTE", "dev", 277, True), ("SST-2", "dev", 872, False), ("QNLI", "dev", 5463, True),
     ("STS-B", "dev", 1500, True), ("WNLI", "dev", 71, True)],
)  # fmt: skip
def test_rows_as_provenance_lists_them(data_dir: Path, task: str, split: str, rows: int, pairs: bool) -> None:
    data = read_glue(data_dir, task, split)
    assert len(data) == rows == len(data.targets) and (data.second is not None) == pairs
    assert all(text for text in data.first)


def test_labels_and_scores(data_dir: Path) -> None:
    rte = read_glue(data_dir, "RTE", "dev")
    assert set(np.unique(rte.targets)) == {0, 1}  # entailment 0, not_entailment 1 (the hub's order)
    stsb = read_glue(data_dir, "STS-B", "dev")
    assert stsb.targets.dtype == np.float32 and stsb.targets[0] == 5.0 and stsb.targets.max() <= 5
    cola = read_glue(data_dir, "CoLA", "dev")
    assert cola.first[0] == "The sailors rode the breeze clear of the rocks." and cola.targets[0] == 1


def test_a_missing_file_names_the_path(data_dir: Path) -> None:
    with pytest.raises(HarnessError, match="QNLI/train.tsv"):
        read_glue(data_dir, "QNLI", "train")
