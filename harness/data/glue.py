"""GLUE tasks read from `<TASK>/{train,dev}.tsv` files (the `download_glue_data.py` layout; see
../shared/data/glue/PROVENANCE-glue.md), under `<data dir>/glue/` or a folder of the user's. Every file is
read with quoting off (`csv.QUOTE_NONE`): with default quoting, stray `"` characters merge rows in MRPC,
STS-B and QNLI. Test labels are not public, so the harness scores the dev split (MNLI: `dev_matched`).

Each task: its files' columns (by header name, or by position for CoLA, which has no header), the label
values (a list: classification, the index is the class, in the order of the Hugging Face `glue`
dataset; None: regression on a float score), the metrics GLUE reports for it (Wang et al., 2018), the
first being the default dev score, and its `nyu-mll/glue` hub config and columns (harness.data.glue_source).
QQP, MNLI and QNLI's train split are not offline (over 4 MiB each, PROVENANCE-glue.md); official row
counts: QQP train 363,846 / dev 40,430, MNLI train 392,702 / dev_matched 9,815, QNLI train 104,743.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.data.lineage import cached_reader, note_read
from harness.errors import HarnessError

NLI = ("entailment", "not_entailment")


@dataclass(frozen=True)
class GlueTask:
    name: str
    first: str | int
    second: str | int | None
    label: str | int
    labels: tuple[str, ...] | None  # None: regression
    metrics: tuple[str, ...]
    hub: tuple[str, str, str | None]  # nyu-mll/glue config, first and second column (label: "label")
    header: bool = True
    dev_file: str = "dev"
    hub_dev: str = "validation"

    @property
    def num_outputs(self) -> int:
        return len(self.labels) if self.labels else 1


GLUE_TASKS = {
    t.name: t
    for t in (
        GlueTask("CoLA", 3, None, 1, ("0", "1"), ("mcc", "acc"), ("cola", "sentence", None), header=False),
        GlueTask("SST-2", "sentence", None, "label", ("0", "1"), ("acc",), ("sst2", "sentence", None)),
        GlueTask("MRPC", "#1 String", "#2 String", "Quality", ("0", "1"), ("f1", "acc"),
                 ("mrpc", "sentence1", "sentence2")),
        GlueTask("STS-B", "sentence1", "sentence2", "score", None, ("pearson", "spearman"),
                 ("stsb", "sentence1", "sentence2")),
        GlueTask("QNLI", "question", "sentence", "label", NLI, ("acc",), ("qnli", "question", "sentence")),
        GlueTask("RTE", "sentence1", "sentence2", "label", NLI, ("acc",), ("rte", "sentence1", "sentence2")),
        GlueTask("WNLI", "sentence1", "sentence2", "label", ("0", "1"), ("acc",),
                 ("wnli", "sentence1", "sentence2")),
        GlueTask("QQP", "question1", "question2", "is_duplicate", ("0", "1"), ("f1", "acc"),
                 ("qqp", "question1", "question2")),
        GlueTask("MNLI", "sentence1", "sentence2", "gold_label", ("entailment", "neutral", "contradiction"),
                 ("acc",), ("mnli", "premise", "hypothesis"), dev_file="dev_matched",
                 hub_dev="validation_matched"),
    )
}  # fmt: skip


@dataclass(frozen=True)
class GlueSplit:
    first: list[str]
    second: list[str] | None
    targets: np.ndarray  # class indices (int64) or scores (float32)

    def __len__(self) -> int:
        return len(self.first)


def glue_task(name: str) -> GlueTask:
    if name not in GLUE_TASKS:
        raise HarnessError(f"unknown GLUE task {name!r}; tasks: {', '.join(GLUE_TASKS)}")
    return GLUE_TASKS[name]


def glue_file(root: Path, name: str, split: str) -> Path:
    """`root/<TASK>/<split>.tsv` (MNLI's dev: dev_matched.tsv), or one line naming it and the fixes."""
    task = glue_task(name)
    path = root / name / f"{task.dev_file if split == 'dev' else split}.tsv"
    if not path.is_file():
        raise HarnessError(
            f"missing GLUE file {path}; put the {name} files of GLUE's download_glue_data.py there, set "
            "glue_dir to the folder holding <TASK>/ (or --data-dir to one holding glue/<TASK>/), or set "
            "glue_source: hub (needs internet)"
        )
    return path


@cached_reader(maxsize=16)
def read_glue(data_dir: Path, name: str, split: str, glue_dir: Path | None = None) -> GlueSplit:
    """One split ("train" or "dev") of a GLUE task from `<glue_dir or data_dir/glue>/<TASK>/`."""
    task = glue_task(name)
    path = glue_file(glue_dir or data_dir / "glue", name, split)
    note_read(path)
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
    return glue_split(first, second if task.second is not None else None, targets, task)


def glue_split(first: list[str], second: list[str] | None, targets: list, task: GlueTask) -> GlueSplit:
    dtype = np.float32 if task.labels is None else np.int64
    return GlueSplit(first, second, np.asarray(targets, dtype=dtype))


def supcon_labels(name: str, targets: np.ndarray) -> np.ndarray:
    """The classes SupCL-Seq contrasts: the labels; for STS-B (regression) the score rounded to its first
    decimal, "we rounded to first decimal digit and grouped by similar labels" (SupCL-Seq footnote 3),
    as the integer round(10 * score) (class k: score k / 10)."""
    if glue_task(name).labels is not None:
        return targets.astype(np.int64)
    return np.rint(targets.astype(np.float64) * 10).astype(np.int64)
