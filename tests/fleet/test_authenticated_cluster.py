"""Issue 46: the compose topology with its credentials, as local processes: a PostgreSQL that needs a
password (scram-sha-256), the compose file's MLflow server with authentication (`--app-name basic-auth`,
its admin account and accounts database from the compose file and deploy/mlflow/basic_auth.ini), its
coordinator and workers with their credentials in the environment. A request without an account is
refused; a worker without credentials, or with wrong ones, ends in one line (exit 2); a study completes,
and no password shows in `ps`, the logs, the MLflow runs' params, tags and config.yaml, or the Optuna
study."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest
import yaml

from harness.study.optuna_study import open_storage
from harness.tracking.tracker import Tracker
from tests.helpers import harness_here, tiny_study
from tests.services import REPO, SECRETS, Compose, Postgres, postgres_missing, process

SERVICES = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
PG_PASSWORD = "pg-secret-6a41c9"
ADMIN_PASSWORD = SECRETS["MLFLOW_ADMIN_PASSWORD"]
SEARCH = "/api/2.0/mlflow/experiments/search?max_results=1"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(postgres_missing() is not None, reason=str(postgres_missing())),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Compose]:
    """Its own PostgreSQL with a password (the session's trusts every local connection), set up by
    deploy/postgres/init.sql, and the compose MLflow server on it."""
    server = Postgres(SERVICES["postgres"]["environment"]["POSTGRES_USER"], password=PG_PASSWORD).start()
    try:
        server.execute((REPO / "deploy/postgres/init.sql").read_text())
        state = tmp_path_factory.mktemp("authenticated")
        topology = Compose(SERVICES, server, state, {"HEARTBEAT": "1", "THREADS": "1", "PROFILE": "tiny"})
        topology.start_mlflow()
        yield topology
        topology.stop_mlflow()
    finally:
        server.stop()


def _get(url: str, user: str | None = None, password: str = "") -> int:
    headers = {}
    if user is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
def test_the_server_refuses_requests_without_an_account(cluster: Compose) -> None:
    assert _get(f"{cluster.uri}/health") == 200  # the health check needs no account (compose's healthcheck)
    assert _get(f"{cluster.uri}{SEARCH}") == 401
    assert _get(f"{cluster.uri}{SEARCH}", "admin", "not-the-password") == 401
    assert _get(f"{cluster.uri}{SEARCH}", "admin", ADMIN_PASSWORD) == 200
    assert cluster.environment("worker-0") == {
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
        "PGPASSWORD": PG_PASSWORD,
        "MLFLOW_TRACKING_USERNAME": "admin",
        "MLFLOW_TRACKING_PASSWORD": ADMIN_PASSWORD,
    }


@pytest.mark.parametrize(
    ("credentials", "line"),
    [
        ({}, "needs credentials (401) and none were given; set MLFLOW_TRACKING_USERNAME and "
             "MLFLOW_TRACKING_PASSWORD to an account of that server"),
        ({"MLFLOW_TRACKING_USERNAME": "admin", "MLFLOW_TRACKING_PASSWORD": "wrong-password"},
         "refused MLFLOW_TRACKING_USERNAME='admin' and its password (401); set MLFLOW_TRACKING_USERNAME and "
         "MLFLOW_TRACKING_PASSWORD to an account of that server"),
    ],
)  # fmt: skip
@pytest.mark.slow
def test_a_worker_without_the_right_credentials_ends_in_one_line(
    cluster: Compose,
    tmp_path: Path,
    tiny_bert: Path,
    credentials: dict,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not waited for (`--wait 600` waits for a server that is not up yet, not for a password)."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="refused")
    monkeypatch.delenv("MLFLOW_TRACKING_USERNAME", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_PASSWORD", raising=False)
    started = time.monotonic()
    result = harness_here(*cluster.command("worker-0", STUDY=study)[3:], env=credentials)
    assert result.returncode == 2 and time.monotonic() - started < 60
    assert result.stderr.strip().splitlines() == [f"error: MLflow server {cluster.uri} {line}"]


def test_a_wrong_database_password_ends_in_one_line_naming_pgpassword(
    cluster: Compose, tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="no_database")
    for name, value in cluster.environment("coordinator").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PGPASSWORD", "not-the-password")
    result = harness_here(*cluster.command("coordinator", STUDY=study)[3:])
    assert result.returncode == 2
    (error,) = result.stderr.strip().splitlines()
    assert error.startswith("error: cannot open Optuna storage postgresql+psycopg2://harness@127.0.0.1:")
    assert "password authentication failed" in error and "set PGPASSWORD or ~/.pgpass" in error


def test_a_password_typed_in_storage_gets_a_warning_and_is_masked(
    cluster: Compose, tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The password inside --storage (wrong here, so the command stops at the database): one warning
    that `ps` shows it, and the error line masks it."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="typed")
    for name, value in cluster.environment("coordinator").items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PGPASSWORD")
    command = cluster.command("coordinator", STUDY=study)[3:]
    url = command[command.index("--storage") + 1]
    command[command.index("--storage") + 1] = url.replace("harness@", "harness:typed-secret-3@")
    result = harness_here(*command)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and "typed-secret-3" not in result.stderr + result.stdout
    assert lines[0] == (
        "warning: the password inside --storage is shown by `ps` to every user of this machine; put it in "
        "PGPASSWORD or ~/.pgpass (PGPASSFILE) and leave it out of the URL, or give the whole URL in "
        "HARNESS_STORAGE"
    )
    assert lines[1].startswith("error: cannot open Optuna storage postgresql+psycopg2://harness:***@")


@pytest.mark.slow
def test_a_study_on_the_authenticated_cluster_shows_no_password(
    cluster: Compose, tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A coordinator and two workers with the compose file's environment (one a fresh interpreter, whose
    command line `ps` shows as typed; one forked) run a three-point grid to the end while `ps` is read
    every 0.2 s."""
    grid = [0.1, 0.2, 0.3]
    study = tiny_study(tmp_path, tiny_bert, {"lambda": grid}, name="authenticated", max_steps=4,
                       eval_every=2, final_tasks=["quick"])  # fmt: skip
    env = cluster.environment("worker-0")
    logs = tmp_path / "logs"
    logs.mkdir()
    seen: set[str] = set()
    done = threading.Event()

    def read_ps() -> None:
        while not done.is_set():
            seen.update(
                subprocess.run(
                    ["ps", "-e", "-ww", "-o", "args"], capture_output=True, text=True
                ).stdout.splitlines()
            )
            time.sleep(0.2)

    reader = threading.Thread(target=read_ps)
    reader.start()
    worker = cluster.command("worker-0", STUDY=study)
    try:
        with open(logs / "fresh.log", "wb") as fresh_log:
            fresh = subprocess.Popen(
                worker, stdout=fresh_log, stderr=subprocess.STDOUT, env={**_base(), **env}
            )
            with process(worker, logs / "forked.log", env) as forked:
                coordinator = subprocess.run(cluster.command("coordinator", STUDY=study), capture_output=True,
                                             text=True, env=_base() | env, timeout=600)  # fmt: skip
                (logs / "coordinator.log").write_text(coordinator.stdout + coordinator.stderr)
                assert forked.wait(timeout=120) == 0
            assert fresh.wait(timeout=120) == 0
    finally:
        done.set()
        reader.join()
    logged = "".join(log.read_text() for log in logs.iterdir())
    assert coordinator.returncode == 0, logged
    assert any("harness worker" in line or "-m harness worker" in line for line in seen)  # ps saw the worker
    assert any(
        "mlflow server" in line or "mlflow server" in line.replace("-m mlflow", "mlflow") for line in seen
    )

    secrets = (PG_PASSWORD, ADMIN_PASSWORD)
    for name, value in env.items():  # this process reads the study and the runs with the same account
        monkeypatch.setenv(name, value)
    storage = cluster.command("coordinator")[cluster.command("coordinator").index("--storage") + 1]
    opt = optuna.load_study(study_name="authenticated.tiny", storage=open_storage(storage))
    assert sorted(t.params["lambda"] for t in opt.trials if t.state.name == "COMPLETE") == grid
    stored = json.dumps([opt.user_attrs, [[t.user_attrs, t.system_attrs] for t in opt.trials]], default=str)
    tracker = Tracker(cluster.uri)
    experiment = tracker.client.get_experiment_by_name("authenticated")
    runs = tracker.client.search_runs([experiment.experiment_id])
    written = [json.dumps([r.data.params, r.data.tags]) for r in runs]
    trial_runs = [r.info.run_id for r in runs if r.data.tags.get("harness.role") == "trial"]
    written += [Path(tracker.client.download_artifacts(run, "config.yaml", str(tmp_path / run))).read_text()
                for run in trial_runs]  # fmt: skip
    assert len(written) == len(runs) + len(grid)
    for secret in secrets:
        assert not [line for line in seen if secret in line]
        assert secret not in logged and secret not in stored and not [w for w in written if secret in w]


def _base() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_TRACKING", "PG"))}
