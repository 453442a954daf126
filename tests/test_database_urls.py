"""Database URLs as SQLAlchemy accepts them with the drivers installed (issue 41 item 3): a bare
`postgresql://` opens with psycopg2 where psycopg (3), which SQLAlchemy 2.1 loads for it, is missing."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.places import resolve_tracking_uri, with_driver
from tests.helpers import harness_here
from tests.services import Postgres, postgres_missing


def only(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Pretend that of the database drivers just `modules` are installed."""
    drivers = {"psycopg", "psycopg2", "MySQLdb", "pymysql"}
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return real(name, *args) if name not in drivers else (name if name in modules else None)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize(
    ("installed", "url", "opened"),
    [
        (["psycopg2"], "postgresql://u@h/d", "postgresql+psycopg2://u@h/d"),
        (["psycopg2"], "postgres://u:pw@h:5432/d", "postgresql+psycopg2://u:pw@h:5432/d"),
        (["psycopg", "psycopg2"], "postgresql://u@h/d", "postgresql://u@h/d"),
        (["psycopg2"], "postgresql+psycopg2://u@h/d", "postgresql+psycopg2://u@h/d"),
        (["pymysql"], "mysql://u@h/d", "mysql+pymysql://u@h/d"),
        ([], "postgresql+pg8000://u@h/d", "postgresql+pg8000://u@h/d"),  # SQLAlchemy's to judge
        ([], "sqlite:///x.db", "sqlite:///x.db"),
    ],
)
def test_a_url_names_an_installed_driver(
    monkeypatch: pytest.MonkeyPatch, installed: list[str], url: str, opened: str
) -> None:
    only(monkeypatch, *installed)
    assert with_driver(url) == opened


@pytest.mark.parametrize(
    ("installed", "url", "message"),
    [
        ([], "postgresql://u@h/d", "no database driver for 'postgresql'; pip install psycopg2-binary (or "
         "'psycopg[binary]')"),
        (["psycopg2"], "postgresql+psycopg://u@h/d",
         "no database driver for 'postgresql+psycopg'; pip install 'psycopg[binary]'"),
        ([], "mysql://u@h/d", "no database driver for 'mysql'; pip install pymysql (or mysqlclient)"),
    ],
)  # fmt: skip
def test_a_missing_driver_names_its_package(
    monkeypatch: pytest.MonkeyPatch, installed: list[str], url: str, message: str
) -> None:
    only(monkeypatch, *installed)
    with pytest.raises(HarnessError) as error:
        with_driver(url)
    assert str(error.value) == message


def test_a_tracking_uri_gets_the_driver_too(monkeypatch: pytest.MonkeyPatch) -> None:
    only(monkeypatch, "psycopg2")
    assert resolve_tracking_uri("postgres://u@h/mlflow") == "postgresql+psycopg2://u@h/mlflow"
    only(monkeypatch)
    with pytest.raises(
        HarnessError, match=r"^tracking URI 'postgresql://u:\*\*\*@h/m': no database driver for "
    ):
        resolve_tracking_uri("postgresql://u:secret@h/m")


def test_the_cli_names_the_package_of_a_missing_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    only(monkeypatch)
    args = [
        "run-study",
        "lambda_tau_sweep",
        "--profile",
        "smoke",
        "--storage",
        "mysql://u:secret@127.0.0.1:9/d",
    ]
    result = harness_here(*args)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (  # after the warning that `ps` shows the password
        "error: cannot open Optuna storage mysql://u:***@127.0.0.1:9/d: no database driver for 'mysql'; "
        "pip install pymysql (or mysqlclient)"
    )


@pytest.mark.slow
@pytest.mark.skipif(postgres_missing() is not None, reason=str(postgres_missing()))
def test_a_bare_postgresql_url_opens_a_real_storage_and_store(postgres: Postgres, tmp_path: Path) -> None:
    """What `--workers 0` recommends (postgresql://...) works as written, for Optuna and for MLflow."""
    import optuna

    from harness.study.optuna_study import open_storage
    from harness.tracking.tracker import Tracker

    optuna_db, mlflow_db = f"bare_optuna_{os.getpid()}", f"bare_mlflow_{os.getpid()}"
    postgres.execute(f"CREATE DATABASE {optuna_db}; CREATE DATABASE {mlflow_db}")
    bare = postgres.url(optuna_db).replace("postgresql+psycopg2://", "postgresql://")
    study = optuna.create_study(study_name="s", storage=open_storage(bare))
    study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=1)
    assert len(optuna.load_study(study_name="s", storage=open_storage(bare)).trials) == 1
    tracker = Tracker(postgres.url(mlflow_db).replace("postgresql+psycopg2://", "postgres://"))
    assert tracker.client.get_experiment(tracker.experiment_id("s")).name == "s"
