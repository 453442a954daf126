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


QQP_HEADER = "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"
MNLI_COLUMNS = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
                "sentence1_parse\tsentence2_parse\tsentence1\tsentence2")  # fmt: skip


def mnli_row(index: int, premise: str, hypothesis: str, labels: list[str]) -> str:
    parses = ["(x)", "(y)", "(X)", "(Y)"]
    return "\t".join([str(index), "1", f"{index}e", "fiction", *parses, premise, hypothesis, *labels])


def test_qqp_and_mnli_read_from_a_users_folder(tmp_path: Path, data_dir: Path) -> None:
    """download_glue_data.py's QQP and MNLI files (MNLI's dev: dev_matched.tsv), labels in the hub's order."""
    from harness.resolve.run_spec import resolve_run

    (tmp_path / "QQP").mkdir()
    (tmp_path / "QQP" / "train.tsv").write_text(
        f"{QQP_HEADER}\n1\t1\t2\tHow old are you?\tWhat is your age?\t1\n2\t3\t4\tWhy?\tWhere?\t0\n"
    )
    (tmp_path / "MNLI").mkdir()
    dev = [mnli_row(i, f"p{i}", f"h{i}", [y] * 5 + [y]) for i, y in
           enumerate(["neutral", "contradiction", "entailment"])]  # fmt: skip
    (tmp_path / "MNLI" / "dev_matched.tsv").write_text(
        "\n".join([f"{MNLI_COLUMNS}\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label", *dev]) + "\n"
    )
    run = resolve_run({"method": "pipeline", "stages": [{"glue": "MNLI"}], "glue_dir": str(tmp_path)})
    qqp = run.sources(data_dir).glue("QQP", "train")
    assert qqp.first == ["How old are you?", "Why?"] and qqp.second == ["What is your age?", "Where?"]
    assert qqp.targets.tolist() == [1, 0]
    mnli = run.sources(data_dir).glue("MNLI", "dev")
    assert mnli.first == ["p0", "p1", "p2"] and mnli.targets.tolist() == [1, 2, 0]  # entailment 0


@pytest.mark.parametrize(("task", "file"), [("QQP", "QQP/train.tsv"), ("MNLI", "MNLI/dev_matched.tsv")])
def test_a_missing_qqp_or_mnli_file_says_how_to_get_it(data_dir: Path, task: str, file: str) -> None:
    split = "dev" if task == "MNLI" else "train"
    with pytest.raises(HarnessError) as error:
        read_glue(data_dir, task, split)
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"missing GLUE file {data_dir / 'glue' / file};")
    assert "download_glue_data.py" in message and "glue_source: hub" in message and "glue_dir" in message


def test_the_hub_source_asks_nyu_mll_glue_for_the_tasks_config(monkeypatch: pytest.MonkeyPatch,
                                                               data_dir: Path) -> None:  # fmt: skip
    """glue_source: hub (needs internet; here `datasets.load_dataset` is stubbed): config, split, columns."""
    import datasets

    from harness.data.glue_source import read_glue_hub
    from harness.resolve.run_spec import resolve_run

    asked = []

    def load_dataset(name: str, config: str, split: str) -> dict:
        asked.append((name, config, split))
        return {"premise": ["a", "b"], "hypothesis": ["c", "d"], "label": [2, 0]}

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):  # as online
        monkeypatch.delenv(name, raising=False)
    read_glue_hub.cache_clear()
    run = resolve_run({"method": "pipeline", "stages": [{"glue": "MNLI"}], "glue_source": "hub"})
    mnli = run.sources(data_dir).glue("MNLI", "dev")
    read_glue_hub.cache_clear()
    assert asked == [("nyu-mll/glue", "mnli", "validation_matched")]
    assert mnli.first == ["a", "b"] and mnli.second == ["c", "d"] and mnli.targets.tolist() == [2, 0]


def test_qqp_and_mnli_are_scored_as_glue_reports_them() -> None:
    from sklearn.metrics import accuracy_score, f1_score

    from harness.scoring.glue import glue_scores

    gold, pred = np.array([1, 0, 1, 1, 0, 0]), np.array([1, 1, 1, 0, 0, 0])
    assert glue_scores("QQP", pred, gold) == pytest.approx(
        {"QQP.f1": 100 * f1_score(gold, pred), "QQP.acc": 100 * accuracy_score(gold, pred)}
    )
    gold3, pred3 = np.array([0, 1, 2, 2, 1]), np.array([0, 2, 2, 2, 1])
    assert glue_scores("MNLI", pred3, gold3) == pytest.approx({"MNLI.acc": 80.0})
