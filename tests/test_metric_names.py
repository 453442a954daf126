"""Issue 21: metrics are stored under sections the MLflow UI groups (train/, dev/, test/), and read back
under the harness's dotted names, from new runs and from runs stored before the sections existed."""

from __future__ import annotations

import time

import pytest
from mlflow.entities import Metric

from harness.metric_names import canonical, history, logged, metrics_of
from harness.study_runs import histories, trial_frame
from harness.tracking import PARENT_TAG, ROLE_TAG, Tracker


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("train.loss", "train/loss"),
        ("dev.STSBenchmark.spearman", "dev/STSBenchmark.spearman"),
        ("dev.overall_r01.best", "dev/overall_r01.best"),
        ("train_set.sst.acc", "train_set/sst.acc"),
        ("trials.complete", "trials/complete"),
        ("STS12-16.wmean", "test/STS12-16.wmean"),
        ("STS.avg", "test/STS.avg"),
        ("MR.acc", "test/MR.acc"),
        ("objective", "objective"),
    ],
)
def test_each_name_has_its_section_and_reads_back(name: str, stored: str) -> None:
    assert logged(name) == stored and canonical(stored) == name


def test_runs_stored_with_old_and_new_names_read_back_alike() -> None:
    """A run logged before the sections (dotted names) and one logged now give the same report frame."""
    tracker = Tracker()
    experiment = tracker.experiment_id("mixed")
    parent = tracker.client.create_run(experiment, tags={ROLE_TAG: "study", "profile": "p"}).info.run_id
    now = int(time.time() * 1000)
    ids = []
    for number, names in enumerate([lambda n: n, logged]):  # old names first, then the sections
        run = tracker.client.create_run(experiment, tags={ROLE_TAG: "trial", PARENT_TAG: parent,
                                                          "trial": str(number)})  # fmt: skip
        metrics = [Metric(names("STS12-16.wmean"), 70.0 + number, now, 10)]
        metrics += [Metric(names("train.loss"), 2.0 - step / 10, now, step) for step in (1, 2)]
        tracker.client.log_batch(run.info.run_id, metrics=metrics, params=[])
        tracker.client.log_param(run.info.run_id, "lambda", str(number))
        tracker.client.set_terminated(run.info.run_id)
        ids.append(run.info.run_id)
    frame, _ = trial_frame(tracker, "mixed")
    assert list(frame["STS12-16.wmean"]) == [70.0, 71.0]
    curves = histories(tracker, ids, "train.loss")
    assert curves[ids[0]] == curves[ids[1]] == {1: 1.9, 2: 1.8}
    assert metrics_of(tracker.client.get_run(ids[1])) == {"STS12-16.wmean": 71.0, "train.loss": 1.8}
    assert len(history(tracker.client, ids[0], "train.loss")) == 2


def test_experiments_open_as_model_training_with_their_description() -> None:
    tracker = Tracker()
    experiment = tracker.experiment_id("described", "what it tests")
    tags = tracker.client.get_experiment(experiment).tags
    assert tags["mlflow.experimentKind"] == "custom_model_development"
    assert tags["mlflow.note.content"] == "what it tests"
    old = tracker.client.create_experiment("made-elsewhere")  # an experiment created before: mended on use
    assert tracker.experiment_id("made-elsewhere", "later") == old
    assert tracker.client.get_experiment(old).tags["mlflow.experimentKind"] == "custom_model_development"
