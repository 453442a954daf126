"""The harness home is found as git finds its repository (issue 41): HARNESS_HOME, else the nearest
`.harness/` here or above, else `.harness/` here; a command that finds no store says where it looked."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.home import find_home, harness_home, missing_store
from tests.helpers import harness_here


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with `.harness/` at its top and a sub-sub-folder; no HARNESS_HOME."""
    top = tmp_path / "project"
    (top / ".harness").mkdir(parents=True)
    (top / "a" / "b").mkdir(parents=True)
    monkeypatch.delenv("HARNESS_HOME", raising=False)
    return top


def test_a_sub_sub_folder_finds_the_home_above(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project / "a" / "b")
    assert harness_home() == project / ".harness"
    assert find_home() == (project / ".harness", True)
    store = project / ".harness" / "mlflow.db"
    assert missing_store(store) == f"no MLflow store at {store} (the nearest .harness/ above {project}/a/b)"
    monkeypatch.chdir(project)
    assert (
        find_home() == (project / ".harness", True) and missing_store(store) == f"no MLflow store at {store}"
    )


def test_the_nearest_home_wins(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "a" / ".harness").mkdir()
    monkeypatch.chdir(project / "a" / "b")
    assert harness_home() == project / "a" / ".harness"


def test_a_file_named_harness_is_not_a_home(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "a" / ".harness").write_text("not a folder")
    monkeypatch.chdir(project / "a" / "b")
    assert harness_home() == project / ".harness"


def test_no_home_above_defaults_to_here_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_HOME", raising=False)
    here = tmp_path / "x" / "y"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    assert find_home() == (here / ".harness", False)
    assert missing_store(here / ".harness" / "mlflow.db") == f"no .harness/ store here or above {here}"
    assert not (here / ".harness").exists()


def test_harness_home_overrides_the_search(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = project / "elsewhere"
    monkeypatch.setenv("HARNESS_HOME", str(elsewhere))
    monkeypatch.chdir(project / "a" / "b")
    assert find_home() == (elsewhere, True)
    assert (
        missing_store(elsewhere / "mlflow.db") == f"no MLflow store at {elsewhere}/mlflow.db (HARNESS_HOME)"
    )
    assert missing_store(project / "other.db") == f"no MLflow store at {project / 'other.db'}"


def test_studies_says_n_of_m_for_an_interrupted_derived_study(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A derived study whose parent recorded 2 trials for smoke, 1 finished: `1 of 2` under its origin."""
    from harness.tracking.store_index import trials_tag
    from harness.tracking.tracker import Tracker

    tracker = Tracker(f"sqlite:///{project / '.harness' / 'mlflow.db'}")
    experiment = tracker.experiment_id("lambda_tau_sweep--max_steps-4")
    for key, value in {"derived_from": "lambda_tau_sweep", "derived.changes": "max_steps 2 -> 4",
                       trials_tag("smoke"): "2"}.items():  # fmt: skip
        tracker.tag_experiment(experiment, key, value)
    run = tracker.client.create_run(experiment, tags={"harness.role": "trial", "profile": "smoke"})
    tracker.client.set_terminated(run.info.run_id, "FINISHED")
    monkeypatch.chdir(project)
    listing = harness_here("studies").stdout
    assert "derived: lambda_tau_sweep--max_steps-4 (max_steps 2 -> 4); finished here: smoke 1 of 2" in listing


def test_studies_from_a_subfolder_counts_the_trials_of_the_store_above(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real MLflow store in the project's `.harness/` with one finished trial run of a shipped study:
    `harness studies` run two folders below counts it and names the store."""
    from harness.tracking.tracker import Tracker

    store = project / ".harness" / "mlflow.db"
    tracker = Tracker(f"sqlite:///{store}")
    experiment = tracker.experiment_id("lambda_tau_sweep")
    run = tracker.client.create_run(experiment, tags={"harness.role": "trial", "profile": "smoke"})
    tracker.client.set_terminated(run.info.run_id, "FINISHED")
    monkeypatch.chdir(project / "a" / "b")
    result = harness_here("studies")
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("lambda_tau_sweep ")]
    assert line.endswith("finished here: smoke 1")
    assert (
        result.stdout.splitlines()[-1]
        == f"(* the profile run without --profile; finished trials from {store})"
    )


def test_studies_without_a_store_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    result = harness_here("studies")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"(no .harness/ store here or above {tmp_path}; finished trials are counted once a study has run)"
    )
    assert not (tmp_path / ".harness").exists()
