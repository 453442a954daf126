"""A new local store seeded from the migrated template equals one MLflow creates itself."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from harness.tracking.store_template import seed_sqlite_store
from harness.tracking.tracker import Tracker

TIMES = {"creation_time", "last_update_time"}


def rows(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows, timestamp columns left out."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        out = {}
        for name in sorted(names):
            columns = [r[1] for r in db.execute(f"PRAGMA table_info('{name}')") if r[1] not in TIMES]
            shown = ", ".join(f'"{c}"' for c in columns)
            out[name] = sorted(map(repr, db.execute(f'SELECT {shown} FROM "{name}"')))
        # each statement's lines sorted: MLflow's own migrations order a table's constraints differently
        # from one run to the next (a set's order), so two stores it creates differ there too
        out["schema"] = sorted(
            sorted((r[0] or "").replace(",", "").splitlines())
            for r in db.execute("SELECT sql FROM sqlite_master")
        )
        return out


@pytest.mark.slow
def test_a_seeded_store_equals_one_mlflow_creates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the Default experiment's location depends on the working directory
    made = tmp_path / "made.db"
    MlflowClient(f"sqlite:///{made}").search_experiments()
    seeded = tmp_path / "seeded.db"
    seed_sqlite_store(f"sqlite:///{seeded}")
    assert (tmp_path / "cache").is_dir() and seeded.is_file()
    assert rows(seeded) == rows(made)
    client = MlflowClient(f"sqlite:///{seeded}")  # MLflow opens it as its own (schema at head)
    assert client.get_experiment("0").artifact_location == str(work / "mlruns" / "0")
    assert [e.name for e in client.search_experiments()] == ["Default"]


@pytest.mark.slow
def test_the_tracker_seeds_a_new_store_and_leaves_an_existing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    uri = f"sqlite:///{tmp_path / 'store.db'}"
    tracker = Tracker(uri)
    experiment = tracker.experiment_id("kept")
    Tracker(uri)  # opening it again copies nothing over it
    assert Tracker(uri).client.get_experiment_by_name("kept").experiment_id == experiment
    assert len(list((tmp_path / "cache").glob("mlflow-*-empty.db"))) == 1


@pytest.mark.slow
def test_an_unwritable_cache_falls_back_to_mlflows_own_creation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("in the way")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(blocked / "cache"))
    tracker = Tracker(f"sqlite:///{tmp_path / 'store.db'}")
    assert tracker.client.get_experiment("0").name == "Default"
