"""GLUE tasks read offline from `glue/<TASK>/{train,dev}.tsv` (the `download_glue_data.py` layout; see
../shared/data/glue/PROVENANCE-glue.md). Every file is read with quoting off (`csv.QUOTE_NONE`): with
default quoting, stray `"` characters merge rows in MRPC, STS-B and QNLI. Test labels are not public, so
the harness scores the dev split.

Each task: its files' columns (by header name, or by position for CoLA, which has no header), the label
values (a list: classification, the index is the class, in the order of the Hugging Face `glue`
dataset; None: regression on a float score) and the metrics GLUE reports for it (Wang et al., 2018),
the first being the default dev score.
"""

from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.data.paths import require_file
from harness.errors import HarnessError


@dataclass(frozen=True)
class GlueTask:
    name: str
    first: str | int
    second: str | int | None
    label: str | int
    labels: tuple[str, ...] | None  # None: regression
    metrics: tuple[str, ...]
    header: bool = True

    @property
    def num_outputs(self) -> int:
        return len(self.labels) if self.labels else 1


GLUE_TASKS = {
    t.name: t
    for t in (
        GlueTask("CoLA", 3, None, 1, ("0", "1"), ("mcc", "acc"), header=False),
        GlueTask("SST-2", "sentence", None, "label", ("0", "1"), ("acc",)),
        GlueTask("MRPC", "#1 String", "#2 String", "Quality", ("0", "1"), ("f1", "acc")),
        GlueTask("STS-B", "sentence1", "sentence2", "score", None, ("pearson", "spearman")),
        GlueTask("QNLI", "question", "sentence", "label", ("entailment", "not_entailment"), ("acc",)),
        GlueTask("RTE", "sentence1", "sentence2", "label", ("entailment", "not_entailment"), ("acc",)),
        GlueTask("WNLI", "sentence1", "sentence2", "label", ("0", "1"), ("acc",)),
    )
}


@dataclass(frozen=True)
class GlueSplit:
    first: list[str]
    second: list[str] | None
    targets: np.ndarray  # class indices (int64) or scores (float32)

    def __len__(self) -> int:
        return len(self.first)


def glue_task(name: str) -> GlueTask:
    if name not in GLUE_TASKS:
        raise HarnessError(f"unknown GLUE task {name!r}; offline tasks: {', '.join(GLUE_TASKS)}")
    return GLUE_TASKS[name]


@functools.lru_cache(maxsize=16)
def read_glue(data_dir: Path, name: str, split: str) -> GlueSplit:
    """One split of a GLUE task from `data_dir/glue/<TASK>/<split>.tsv`."""
    task = glue_task(name)
    path = require_file(data_dir / "glue" / name / f"{split}.tsv")
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    header, body = (rows[0], rows[1:]) if task.header else ([], rows)
    named = [key for key in (task.first, task.second, task.label) if key is not None]
    missing = [key for key in named if isinstance(key, str) and key not in header]
    if missing:
        raise HarnessError(f"{path}: no column {missing[0]!r} in its header; is it the GLUE {name} file?")
    column = {key: header.index(key) if isinstance(key, str) else key for key in named}
    first, second, targets = [], [], []
    for line, row in enumerate(body, start=2 if task.header else 1):
        if len(row) <= max(column.values()):
            raise HarnessError(
                f"{path}:{line}: {len(row)} columns, expected more than {max(column.values())}"
            )
        value = row[column[task.label]].strip()
        if task.labels is None:
            targets.append(float(value))
        elif value in task.labels:
            targets.append(task.labels.index(value))
        else:
            raise HarnessError(f"{path}:{line}: label {value!r} is not one of {', '.join(task.labels)}")
        first.append(row[column[task.first]])
        if task.second is not None:
            second.append(row[column[task.second]])
    dtype = np.float32 if task.labels is None else np.int64
    return GlueSplit(first, second if task.second is not None else None, np.asarray(targets, dtype=dtype))
