"""harness.data.lineage: files read are recorded (cached readers too), fingerprints equal hashlib's and are
kept by path, size and mtime; a trial logs its files and MLflow dataset inputs, and a resume that would
read changed data says so."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from harness.data import lineage as lineage_module
from harness.data.lineage import cached_reader, fingerprint, note_read, reading
from harness.evaluate.tasks.sts import load_sts_task
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.tracker import LINEAGE_ARTIFACT, Tracker
from tests.helpers import child_runs, harness_here, tiny_study


def test_reads_are_recorded_by_the_innermost_block_and_replayed_by_cached_readers(data_dir: Path) -> None:
    calls = []

    @cached_reader(maxsize=2)
    def read(path: Path) -> str:
        calls.append(path)
        note_read(path)
        return path.read_text()[:10]

    path = data_dir / "wiki" / "wiki1m_head.txt"
    with reading() as outer:
        with reading() as inner:
            read(path)
        assert inner == {path.resolve()} and outer == set()
        read(path)  # a cache hit: no second read, the file is reported again
    assert outer == {path.resolve()} and calls == [path]
    with reading() as sts:
        load_sts_task(data_dir, "STS16", "senteval")
        load_sts_task(data_dir, "STS16", "senteval")
    assert len(sts) == 10 and all(p.name.startswith("STS.") for p in sts)  # 5 subsets: input and gold


def test_fingerprints_equal_hashlibs_and_are_hashed_again_only_after_a_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "data.txt"
    path.write_text("one\n")
    assert fingerprint(path) == {"bytes": 4, "sha256": hashlib.sha256(b"one\n").hexdigest()}
    monkeypatch.setattr(lineage_module, "_KNOWN", {})  # a new process: the store answers, nothing hashed
    monkeypatch.setattr(lineage_module, "_sha256", lambda p: pytest.fail("hashed again"))
    assert fingerprint(path)["sha256"] == hashlib.sha256(b"one\n").hexdigest()
    monkeypatch.undo()
    path.write_text("two!\n")
    os.utime(path, ns=(1, 1))
    assert fingerprint(path) == {"bytes": 5, "sha256": hashlib.sha256(b"two!\n").hexdigest()}


@pytest.mark.slow
def test_a_trial_logs_its_data_and_a_resume_on_changed_data_says_so(
    tmp_path: Path, tiny_bert: Path, data_dir: Path
) -> None:
    copy = tmp_path / "data"  # a data folder of our own, to change a file in it
    for part in ("senteval/SNLI", "senteval/STS/STSBenchmark"):
        shutil.copytree(data_dir / part, copy / part)
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name="lineage")
    study = load_study(path)
    run_study(study, data_dir=str(copy), progress=False)
    run = child_runs("lineage")[0]
    tracker = Tracker()
    files = json.loads(tracker.download(run.info.run_id, LINEAGE_ARTIFACT, tmp_path).read_text())
    training = {row["path"]: row for row in files["training"]}
    evaluation = {row["path"]: row for row in files["evaluation"]}
    assert set(training) == {f"senteval/SNLI/{n}.dev" for n in ("s1", "s2", "labels")}
    assert set(evaluation) == {f"senteval/STS/STSBenchmark/sts-{split}.csv" for split in ("dev", "test")}
    for name, row in {**training, **evaluation}.items():
        content = (copy / name).read_bytes()
        assert row["sha256"] == hashlib.sha256(content).hexdigest() and row["bytes"] == len(content)
    inputs = tracker.get_run(run.info.run_id).inputs.dataset_inputs
    named = {(i.dataset.name, i.tags[0].value) for i in inputs}
    assert named == {("senteval/SNLI", "training"), ("senteval/STS/STSBenchmark", "evaluation")}

    result = harness_here("run-study", path, "--data-dir", str(copy), "--no-progress")  # resume: unchanged
    assert result.returncode == 0 and "data changed" not in result.stdout + result.stderr
    changed = copy / "senteval/SNLI/s1.dev"
    before = hashlib.sha256(changed.read_bytes()).hexdigest()
    changed.write_text(changed.read_text().replace("A ", "The ", 1))
    after = hashlib.sha256(changed.read_bytes()).hexdigest()
    result = harness_here("run-study", path, "--data-dir", str(copy), "--no-progress")
    lines = [line for line in (result.stdout + result.stderr).splitlines() if "data changed" in line]
    assert result.returncode == 0 and lines == [
        "data changed since this study's earlier trials: senteval/SNLI/s1.dev "
        f"(sha256 {before[:8]} -> {after[:8]}); its trials would mix two versions of the data: restore the "
        "files, or re-run with --fresh to start over"
    ]
