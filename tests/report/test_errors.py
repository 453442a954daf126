"""Error-analysis tables from known predictions: the rows are the first run's worst examples, in order."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.data.cs224n import multitask_data
from harness.errors import HarnessError
from harness.report.parts.errors_table import ErrorsTable, error_rows


def spec(task: str) -> ErrorsTable:
    return ErrorsTable(name="t", kind="errors", task=task, label="{variant}", runs=["sup", "ft"], top=3)


def test_worst_sts_pairs_by_distance_from_gold(data_dir: Path) -> None:
    data = multitask_data(data_dir, None)
    gold = data.sts_dev.targets.astype(float)
    predicted = gold.copy()
    predicted[[7, 3, 11]] += [1.0, 3.0, -2.0]  # errors 1, 3, 2
    rows = error_rows(spec("sts"), {"sup": predicted.tolist(), "ft": gold.tolist()}, data_dir)
    assert rows["Sentence 1"].tolist() == [data.sts_dev.first[i] for i in (3, 11, 7)]
    assert (
        rows["sup"].tolist() == predicted[[3, 11, 7]].tolist()
        and rows["ft"].tolist() == gold[[3, 11, 7]].tolist()
    )


def test_misclassified_sst_by_confidence(data_dir: Path) -> None:
    data = multitask_data(data_dir, None)
    gold = data.sst_dev.labels
    probabilities = np.eye(5)[gold] * 0.6 + 0.1  # right everywhere ...
    for row, confidence in ((4, 0.7), (9, 0.9), (2, 0.8)):  # ... except three rows, wrong with confidence
        wrong = (gold[row] + 1) % 5
        probabilities[row] = (1 - confidence) / 4
        probabilities[row, wrong] = confidence
    rows = error_rows(spec("sst"), {"sup": probabilities.tolist(), "ft": np.eye(5)[gold].tolist()}, data_dir)
    assert rows["Sentence"].tolist() == [data.sst_dev.texts[i] for i in (9, 2, 4)]
    assert rows["sup"].tolist() == [(gold[i] + 1) % 5 for i in (9, 2, 4)]
    assert rows["ft"].tolist() == rows["Gold"].tolist()


def test_phillips_pick_draws_at_random_among_pairs_off_by_more_than_the_threshold(data_dir: Path) -> None:
    """Phillips 5.1: "four random sentence pairs where the difference between baseline similarity and
    true similarity was greater than 2.5": only such pairs, four of them, the same four for one seed."""
    data = multitask_data(data_dir, None)
    gold = data.sts_dev.targets.astype(float)
    baseline = gold.copy()
    off = [5, 17, 40, 41, 99, 120, 300]
    baseline[off] += 2.6  # off by more than 2.5
    baseline[[1, 2]] += 2.5  # exactly 2.5: not "greater than"
    phillips = ErrorsTable(name="t", kind="errors", task="sts", label="{variant}", runs=["ft", "sup"], top=4,
                           pick="random_beyond", beyond=2.5, seed=0)  # fmt: skip
    predictions = {"ft": baseline.tolist(), "sup": gold.tolist()}
    rows = error_rows(phillips, predictions, data_dir)
    chosen = [data.sts_dev.first.index(s) for s in rows["Sentence 1"]]
    assert len(chosen) == 4 and set(chosen) <= set(off)
    assert rows.equals(error_rows(phillips, predictions, data_dir))  # reproducible
    other = error_rows(phillips.model_copy(update={"seed": 1}), predictions, data_dir)
    assert len(other) == 4 and set(other["Sentence 1"]) <= {data.sts_dev.first[i] for i in off}


def test_the_table_reads_its_examples_from_the_reports_data_dir(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`harness report --data-dir` reaches the part (PartContext.data_dir): given, its sentences come from
    there; a folder without the CS224N data is named in the error."""
    from harness.report import parts
    from harness.report.parts.base import PartContext

    sts = multitask_data(data_dir, None).sts_dev
    gold = sts.targets.astype(float).tolist()  # no error anywhere: the first rows are shown, in order
    monkeypatch.setattr(parts.errors_table, "run_predictions", lambda *_: {"sup": gold, "ft": gold})
    context = PartContext(None, None, tmp_path, "", None, None, str(data_dir))  # type: ignore[arg-type]
    assert multitask_data(data_dir, None).sts_dev.first[0].replace("&", r"\&")[:20] in spec("sts").latex(
        context
    )
    elsewhere = PartContext(None, None, tmp_path, "", None, None, str(tmp_path / "empty"))  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="empty"):
        spec("sts").latex(elsewhere)
