"""harness.credentials: which URLs carry a password, the header MLflow's client would send, the one-line
refusals, and the command line's warning and HARNESS_STORAGE default. The servers that refuse are in
tests/fleet/test_authenticated_cluster.py."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from harness.credentials import authorization_header, password_in, refused
from tests.helpers import harness_here, tiny_study


@pytest.mark.parametrize(
    ("url", "has"),
    [
        ("postgresql+psycopg2://harness:pw@db:5432/optuna", True),
        ("postgresql://harness:@db/optuna", True),  # an empty password is still one typed
        ("http://alice:s3cret@mlflow:5000", True),
        ("postgresql+psycopg2://harness@db:5432/optuna", False),
        ("postgresql://db:5432/optuna", False),  # a port is not a password
        ("sqlite:////tmp/x:y@z/optuna.db", False),
        ("/tmp/optuna.journal", False),
    ],
)
def test_password_in(url: str, has: bool) -> None:
    assert password_in(url) is has


def test_the_header_is_what_mlflows_client_sends(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert authorization_header() == {}
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "alice")
    monkeypatch.setenv("MLFLOW_TRACKING_PASSWORD", "pä:ss")
    (scheme, value) = authorization_header()["Authorization"].split()
    assert scheme == "Basic" and base64.b64decode(value).decode() == "alice:pä:ss"
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok")  # MLflow prefers the token
    assert authorization_header() == {"Authorization": "Bearer tok"}


def test_a_403_names_the_account_and_the_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_USERNAME", "bob")
    assert str(refused("http://m:5000", 403)) == (
        "MLflow server http://m:5000 refused account 'bob' the permission to do this (403); ask the server's "
        "admin for EDIT permission on the experiment, or use another account"
    )


def test_a_password_typed_in_tracking_uri_gets_one_warning_and_is_not_echoed(
    tmp_path: Path, tiny_bert: Path
) -> None:
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="typed")
    result = harness_here("worker", study, "--tracking-uri", "http://alice:typed-pw@127.0.0.1:9")
    warning, error = result.stderr.splitlines()
    assert warning.startswith("warning: the password inside --tracking-uri is shown by `ps` to every user")
    assert "MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD" in warning
    assert error.startswith("error: MLflow server http://alice:***@127.0.0.1:9 is not reachable")
    assert "typed-pw" not in result.stderr + result.stdout and result.returncode == 2


def test_messages_with_urls_are_masked() -> None:
    from harness.errors import mask_password

    line = "failed: http://a:b@h:1/x, then postgresql://u:p@db/o (sqlite:////x:y/z)"
    assert (
        mask_password(line) == "failed: http://a:***@h:1/x, then postgresql://u:***@db/o (sqlite:////x:y/z)"
    )


@pytest.mark.slow
def test_storage_defaults_to_harness_storage(tmp_path: Path, tiny_bert: Path) -> None:
    """A study without --storage keeps its trials where HARNESS_STORAGE says; no warning (nothing typed)."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="env_storage", max_steps=1, eval_every=1)
    journal = tmp_path / "elsewhere" / "optuna.journal"
    journal.parent.mkdir()
    result = harness_here("run-study", study, "--no-progress", env={"HARNESS_STORAGE": str(journal)})
    assert result.returncode == 0, result.stderr
    assert journal.stat().st_size > 0 and "warning" not in result.stderr
