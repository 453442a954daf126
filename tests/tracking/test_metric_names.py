"""Issue 21: metrics are stored under sections the MLflow UI groups (train/, dev/), and read back under the
harness's dotted names, from new runs and from runs stored before the sections existed. Issue 41: the final
scores have no section (the UI's last one, after the curves); runs that stored them under `test/` read
back alike."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mlflow.entities import Metric

from harness.tracking.metric_names import canonical, history, logged, metrics_of
from harness.tracking.study_runs import histories, trial_frame
from harness.tracking.tracker import PARENT_TAG, ROLE_TAG, Tracker


@pytest.mark.parametrize(
    ("name", "stored"),
    [
        ("train.loss", "train/loss"),
        ("dev.STSBenchmark.spearman", "dev/STSBenchmark.spearman"),
        ("dev.overall_r01.best", "dev/overall_r01.best"),
        ("train_set.sst.acc", "train_set/sst.acc"),
        ("trials.complete", "trials/complete"),
        ("STS12-16.wmean", "STS12-16.wmean"),
        ("STS.avg", "STS.avg"),
        ("MR.acc", "MR.acc"),
        ("objective", "objective"),
    ],
)
def test_each_name_has_its_section_and_reads_back(name: str, stored: str) -> None:
    assert logged(name) == stored and canonical(stored) == name


@pytest.mark.parametrize("stored", ["test/STS12-16.wmean", "test/MR.acc", "test/STS.avg"])
def test_final_scores_stored_under_the_old_test_section_read_back(stored: str) -> None:
    assert canonical(stored) == stored.removeprefix("test/")
    assert logged(canonical(stored)) == stored.removeprefix("test/")  # stored now without a section


def ui_sections(stored: list[str]) -> list[str]:
    """A run's chart sections in MLflow 3.17's order (getBaseChartAndSectionConfigs in the UI's bundle):
    each name's part before the last `/`, named ones sorted (JavaScript's default sort: code points), then
    "" (shown as "Model metrics"), every metric without a `/`."""
    named = sorted({key.rpartition("/")[0] for key in stored} - {""})
    return named + ([""] if any("/" not in key for key in stored) else [])


def test_the_ui_shows_training_and_dev_curves_before_the_final_scores() -> None:
    curves = ["train.loss", "train.lr", "dev.STSBenchmark.spearman", "train_set.sst.acc"]
    finals = ["STS12.all.spearman", "STSBenchmark.spearman", "SICKRelatedness.spearman", "MR.acc", "STS.avg"]
    stored = [logged(name) for name in [*curves, *finals, "objective"]]
    sections = ui_sections(stored)
    position = {name: sections.index(logged(name).rpartition("/")[0]) for name in curves + finals}
    assert max(position[name] for name in curves) < min(position[name] for name in finals)
    assert {position[name] for name in finals} == {len(sections) - 1}  # one section, the last


def test_runs_stored_with_old_and_new_names_read_back_alike() -> None:
    """A run logged before the sections (dotted names), one that kept its final scores under `test/`, and
    one logged now give the same report frame."""
    tracker = Tracker()
    experiment = tracker.experiment_id("mixed")
    parent = tracker.client.create_run(experiment, tags={ROLE_TAG: "study", "profile": "p"}).info.run_id
    now = int(time.time() * 1000)
    ids = []

    def with_test_section(name: str) -> str:  # issue 21 to 41: the final scores under test/
        return logged(name) if "/" in logged(name) else f"test/{name}"

    for number, names in enumerate([lambda n: n, with_test_section, logged]):  # oldest first
        run = tracker.client.create_run(experiment, tags={ROLE_TAG: "trial", PARENT_TAG: parent,
                                                          "trial": str(number)})  # fmt: skip
        metrics = [Metric(names("STS12-16.wmean"), 70.0 + number, now, 10)]
        metrics += [Metric(names("train.loss"), 2.0 - step / 10, now, step) for step in (1, 2)]
        tracker.client.log_batch(run.info.run_id, metrics=metrics, params=[])
        tracker.client.log_param(run.info.run_id, "lambda", str(number))
        tracker.client.set_terminated(run.info.run_id)
        ids.append(run.info.run_id)
    frame, _ = trial_frame(tracker, "mixed")
    assert list(frame["STS12-16.wmean"]) == [70.0, 71.0, 72.0]
    curves = histories(tracker, ids, "train.loss")
    assert curves[ids[0]] == curves[ids[1]] == curves[ids[2]] == {1: 1.9, 2: 1.8}
    for number, run_id in enumerate(ids):
        metrics = metrics_of(tracker.client.get_run(run_id))
        assert metrics == {"STS12-16.wmean": 70.0 + number, "train.loss": 1.8}
        assert [p.value for p in history(tracker.client, run_id, "STS12-16.wmean")] == [70.0 + number]
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


def test_every_metric_name_is_in_a_declared_family() -> None:
    """Each family once, with its MLflow section; a final score is a registered task's score or a declared
    aggregate; anything else is undeclared and, under HARNESS_STRICT_METRICS (the tests), fails to log."""
    from harness.tracking.metric_names import FAMILIES, undeclared

    assert len({family.head for family in FAMILIES}) == len(FAMILIES)
    for name in ("train.loss", "dev.STSBenchmark.spearman.best", "train_set.sst.acc", "trials.complete",
                 "best.objective", "seconds.encode", "claims.holds", "objective", "STS12.spearman_wmean",
                 "STS12-16.wmean", "STS.avg", "MRPC.f1", "MR.devacc"):  # fmt: skip
        assert undeclared(name) is None, name
    for name in ("STS12.all.spearman", "sts.acc", "train", "loss", "STSBenchmark.f1", "test.STS12.spearman"):
        assert "is undeclared" in undeclared(name), name


def test_logging_an_undeclared_metric_fails_in_the_tests(tmp_path: Path) -> None:
    tracker = Tracker(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = tracker.start_run(tracker.experiment_id("names"), "run", {})
    run.log_metrics({"dev.STSBenchmark.spearman": 80.0, "objective": 80.0})
    with pytest.raises(ValueError, match="metric 'STS12.all.spearman' is undeclared"):
        run.log_metrics({"STS12.all.spearman": 70.0})
    assert set(tracker.get_run(run.run_id).data.metrics) == {"dev/STSBenchmark.spearman", "objective"}
