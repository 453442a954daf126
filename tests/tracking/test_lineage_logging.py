"""LoggedRun.log_lineage: the data files as `data_files.json` and as dataset inputs by folder; a unique-key
error from a worker that registered the same dataset a moment earlier is retried, not a failed trial (the
race four local workers met in tests/fleet/test_placement.py)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException

from harness.tracking.tracker import LINEAGE_ARTIFACT, Tracker

LINEAGE = {
    "training": [{"path": "wiki/wiki1m_head.txt", "bytes": 10, "sha256": "ab" * 32}],
    "evaluation": [{"path": "senteval/STS/STSBenchmark/sts-test.csv", "bytes": 20, "sha256": "cd" * 32}],
}


def _run(tracker: Tracker, experiment: str):  # noqa: ANN202
    return tracker.start_run(experiment, "trial", {"harness.role": "trial"})


def test_a_duplicate_dataset_from_another_worker_is_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = Tracker()
    experiment = tracker.experiment_id("lineage")
    real, calls = MlflowClient.log_inputs, []

    def racing(self: MlflowClient, *args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 1:  # what the store raises when another worker inserted the dataset first
            raise MlflowException("(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id")
        real(self, *args, **kwargs)

    monkeypatch.setattr(MlflowClient, "log_inputs", racing)
    run = _run(tracker, experiment)
    run.log_lineage(LINEAGE)
    assert len(calls) == 2
    stored = tracker.get_run(run.run_id)
    named = {(i.dataset.name, i.tags[0].value) for i in stored.inputs.dataset_inputs}
    assert named == {("wiki", "training"), ("senteval/STS/STSBenchmark", "evaluation")}
    assert json.loads(tracker.download(run.run_id, LINEAGE_ARTIFACT, tmp_path).read_text()) == LINEAGE


def test_another_error_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker()
    run = _run(tracker, tracker.experiment_id("lineage"))
    calls = []

    def broken(self: MlflowClient, *args: object, **kwargs: object) -> None:
        calls.append(1)
        raise MlflowException("disk I/O error")

    monkeypatch.setattr(MlflowClient, "log_inputs", broken)
    with pytest.raises(MlflowException, match="disk I/O error"):
        run.log_lineage(LINEAGE)
    assert len(calls) == 1


def test_workers_logging_the_same_data_at_once_all_succeed() -> None:
    tracker = Tracker()
    experiment = tracker.experiment_id("lineage")
    runs = [_run(tracker, experiment) for _ in range(6)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(runs))

    def log(run: object) -> None:
        start.wait()
        try:
            run.log_lineage(LINEAGE)  # type: ignore[attr-defined]
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=log, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert all(len(tracker.get_run(run.run_id).inputs.dataset_inputs) == 2 for run in runs)
