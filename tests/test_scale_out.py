"""Issue 11: the compose file's topology, a second coordinator on a running study refused, a killed local
worker replaced, the dashboard. The topology run as local processes under faults:
tests/fleet/test_faults.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import optuna
import pytest
import yaml

from harness.fleet.recovery import MLFLOW_RUN, WORKER
from harness.study.optuna_study import open_storage
from harness.tracking.tracker import Tracker
from tests.helpers import harness_here, tiny_study
from tests.services import REPO, Postgres, free_port, postgres_missing, process, wait_for_http

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
# each trial waits 1.5 s once its MLflow run is recorded (harness.fleet.signals), where _kill_mid_trial
# kills it
PAUSE = {"HARNESS_PAUSE_AT": "trial_started=1.5"}
QUICK = ["quick"]  # final scores on STS-B test alone: these tests check processes and bookkeeping, not scores
needs_postgres = pytest.mark.skipif(postgres_missing() is not None, reason=str(postgres_missing()))


def test_compose_file_has_the_topology() -> None:
    """Postgres, an MLflow server on it serving artifacts with --allowed-hosts, optuna-dashboard, a
    coordinator and GPU workers on the same storage; ports published on 127.0.0.1 only."""
    assert set(SERVICES) == {"postgres", "mlflow", "dashboard", "coordinator", "worker-0", "worker-1"}
    mlflow = SERVICES["mlflow"]["command"]
    assert "--serve-artifacts" in mlflow and "--allowed-hosts" in mlflow
    assert mlflow[mlflow.index("--backend-store-uri") + 1].startswith("postgresql")
    coordinator, worker = SERVICES["coordinator"]["command"], SERVICES["worker-0"]["command"]
    assert (
        coordinator[:2] == ["harness", "run-study"] and coordinator[coordinator.index("--workers") + 1] == "0"
    )
    assert worker[:2] == ["harness", "worker"] and "--wait" in worker
    storage = coordinator[coordinator.index("--storage") + 1]
    dashboard = SERVICES["dashboard"]["command"]
    assert worker[worker.index("--storage") + 1] == storage == dashboard[dashboard.index("--storage") + 1]
    assert coordinator[coordinator.index("--tracking-uri") + 1] == "http://mlflow:5000"
    for index in (0, 1):  # one GPU each, a different one (replicas of one service would share GPU 0)
        assert SERVICES[f"worker-{index}"]["command"] == worker
        (gpu,) = SERVICES[f"worker-{index}"]["deploy"]["resources"]["reservations"]["devices"]
        assert gpu["device_ids"] == [str(index)] and gpu["capabilities"] == ["gpu"]
        assert SERVICES[f"worker-{index}"]["deploy"]["replicas"] == "${TRIALS_PER_GPU:-1}"  # K on each GPU
    assert SERVICES["coordinator"]["depends_on"]["mlflow"]["condition"] == "service_healthy"
    # a killed coordinator or worker is started again (the same command resumes: bench/chaos.py); the
    # coordinator a bounded number of times, so that a configuration error ends
    assert (
        SERVICES["coordinator"]["restart"] == "on-failure:5"
        and SERVICES["worker-0"]["restart"] == "on-failure"
    )
    jobs = {
        d["metadata"]["name"]: d
        for d in yaml.safe_load_all((REPO / "deploy/kubernetes/workers.yaml").read_text())
    }
    assert jobs["harness-coordinator"]["spec"]["backoffLimit"] == 5
    assert SERVICES["mlflow"]["environment"]["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] == "false"  # no consumers
    for service in SERVICES.values():
        assert all(str(port).startswith("127.0.0.1:") for port in service.get("ports", []))
    init = [v for v in SERVICES["postgres"]["volumes"] if "initdb" in v][0].split(":")[0]
    assert (REPO / init).is_file()
    for example in ("deploy/slurm/harness.sbatch", "deploy/kubernetes/workers.yaml", "deploy/Dockerfile"):
        assert (REPO / example).is_file()


def test_deploy_files_keep_credentials_off_command_lines_and_ship_no_password() -> None:
    """Issue 46: every password comes from the environment (compose: `${NAME:?...}`, no default; Kubernetes:
    Secrets), no command line carries a URL with a password, and the MLflow server runs with
    authentication, its admin password from the environment."""
    from harness.credentials import password_in

    for service in SERVICES.values():
        assert not [arg for arg in service.get("command", []) if password_in(str(arg))]
        for name, value in service.get("environment", {}).items():
            if "PASSWORD" in name or "SECRET" in name:
                assert str(value).startswith("${") and ":?" in str(value), (
                    name,
                    value,
                )  # required, no default
    mlflow = SERVICES["mlflow"]
    assert mlflow["command"][2:4] == ["--app-name", "basic-auth"]
    assert mlflow["environment"]["MLFLOW_AUTH_ADMIN_PASSWORD"].startswith("${MLFLOW_ADMIN_PASSWORD:?")
    for service in ("coordinator", "worker-0", "dashboard"):  # the database password, the MLflow account
        assert {"PGPASSWORD", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"} <= set(
            SERVICES[service]["environment"]
        )
    jobs = list(yaml.safe_load_all((REPO / "deploy/kubernetes/workers.yaml").read_text()))
    for job in jobs:
        (container,) = job["spec"]["template"]["spec"]["containers"]
        assert not [arg for arg in container["command"] + container.get("args", []) if password_in(arg)]
        secrets = {e["name"]: e["valueFrom"]["secretKeyRef"]["name"] for e in container["env"]}
        assert secrets == {"PGPASSWORD": "harness-postgres", "MLFLOW_TRACKING_USERNAME": "harness-mlflow",
                           "MLFLOW_TRACKING_PASSWORD": "harness-mlflow"}  # fmt: skip


@pytest.mark.parametrize(("task", "verb"), [("0", "run-study"), ("1", "worker")])
def test_the_slurm_script_passes_the_storage_in_the_environment(task: str, verb: str, tmp_path: Path) -> None:
    """deploy/slurm/harness.sbatch with a stand-in `harness` that writes what it was given: its command line
    has neither the storage URL nor its password; HARNESS_STORAGE reaches it in the environment."""
    stand_in = tmp_path / "bin" / "harness"
    stand_in.parent.mkdir()
    stand_in.write_text('#!/bin/sh\necho "argv: $*"\necho "storage: $HARNESS_STORAGE"\n')
    stand_in.chmod(0o755)
    env = {"PATH": f"{stand_in.parent}:/usr/bin:/bin", "SLURM_ARRAY_TASK_ID": task, "HOME": str(tmp_path),
           "HARNESS_STORAGE": "postgresql+psycopg2://harness:s3cret@db:5432/optuna",
           "MLFLOW_TRACKING_URI": "http://mlflow:5000"}  # fmt: skip
    script = ["bash", str(REPO / "deploy/slurm/harness.sbatch")]
    done = subprocess.run(script, env=env, capture_output=True, text=True, timeout=30)
    argv, storage = done.stdout.splitlines()
    assert done.returncode == 0 and argv.startswith(f"argv: {verb} lambda_tau_sweep")
    assert "s3cret" not in argv and "--storage" not in argv and storage.endswith("s3cret@db:5432/optuna")
    env.pop("HARNESS_STORAGE")
    missing = subprocess.run(script, env=env, capture_output=True, text=True, timeout=30)
    assert missing.returncode != 0 and "set HARNESS_STORAGE=postgresql+psycopg2://user@host" in missing.stderr


def _kill_mid_trial(storage: object, name: str) -> int:
    """SIGKILL the worker process on this host that runs the first trial with an MLflow run, 0.3 s into
    that run (the worker's pid from the trial's `worker` attribute, host:pid); returns the pid."""
    host = socket.gethostname()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            trials = optuna.load_study(study_name=name, storage=storage).trials
        except KeyError:  # the coordinator has not created the study yet
            trials = []
        for trial in trials:
            worker = trial.user_attrs.get(WORKER, "")
            started = trial.state.name == "RUNNING" and MLFLOW_RUN in trial.user_attrs
            if started and worker.startswith(f"{host}:"):
                time.sleep(0.3)  # inside its pause (PAUSE)
                pid = int(worker.rsplit(":", 1)[1])
                os.kill(pid, signal.SIGKILL)
                return pid
        time.sleep(0.2)
    raise TimeoutError("no worker started a trial within 300 s")


@pytest.mark.slow
@needs_postgres
@pytest.mark.parametrize("storage_kind", ["postgresql", "journal"])
def test_a_second_coordinator_is_refused(
    storage_kind: str, postgres: Postgres, tmp_path: Path, tiny_bert: Path
) -> None:
    if storage_kind == "postgresql":
        postgres.execute(f"CREATE DATABASE lease_{os.getpid()}")
        storage = postgres.url(f"lease_{os.getpid()}")
    else:
        storage = str(tmp_path / "optuna.journal")
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5]}, name="lease", max_steps=6, eval_every=3,
                       final_tasks=QUICK)  # fmt: skip
    args = [sys.executable, "-m", "harness", "run-study", study, "--storage", storage, "--no-progress"]
    with process(args, tmp_path / "first.log") as first:
        _wait_for_lease(storage)
        os.kill(first.pid, signal.SIGSTOP)  # the first holds its lease (TTL 60 s) however fast it would end
        try:
            second = harness_here(*args[3:])  # refused in this process: the refusal is what is tested
        finally:
            os.kill(first.pid, signal.SIGCONT)
        first.wait(timeout=600)
    assert second.returncode == 2, second.stderr
    (line,) = [line for line in second.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: study lease.tiny is already coordinated by pid {first.pid} on ")
    assert first.returncode == 0, (tmp_path / "first.log").read_text()[-3000:]
    trials = optuna.load_study(study_name="lease.tiny", storage=open_storage(storage)).trials
    assert sorted(t.state.name for t in trials) == ["COMPLETE", "COMPLETE"]  # nothing raced, nothing re-run


def _wait_for_lease(storage: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            attrs = optuna.load_study(study_name="lease.tiny", storage=open_storage(storage)).user_attrs
        except KeyError:
            attrs = {}
        if attrs.get("coordinator", {}).get("expires", 0) > time.time():
            return
        time.sleep(0.2)
    raise TimeoutError("the first coordinator took no lease within 120 s")


@pytest.mark.slow
def test_a_killed_local_worker_is_replaced_and_its_trial_run_again(tmp_path: Path, tiny_bert: Path) -> None:
    """`run-study --workers 2` on the journal store (no heartbeats): the coordinator sees the worker die,
    queues its trial again at once and starts a replacement."""
    grid = [0.1, 0.5, 0.9]
    study = tiny_study(tmp_path, tiny_bert, {"lambda": grid}, name="local_kill", max_steps=6, eval_every=3,
                       final_tasks=QUICK)  # fmt: skip
    storage = str(tmp_path / "optuna.journal")

    def kill_a_worker() -> int:
        return _kill_mid_trial(open_storage(storage), "local_kill.tiny")

    with ThreadPoolExecutor(1) as background:
        killing = background.submit(kill_a_worker)
        # the coordinator in this process (its workers are new processes): one Python start-up less
        args = ("run-study", study, "--workers", "2", "--storage", storage, "--no-progress")
        coordinator = harness_here(*args, env=PAUSE)  # the workers it starts inherit PAUSE
        victim = killing.result()
    log = coordinator.stdout + coordinator.stderr
    assert coordinator.returncode == 0, log[-3000:]
    assert f"(pid {victim}) killed by signal 9; 1 trial(s) queued again" in log
    trials = optuna.load_study(study_name="local_kill.tiny", storage=open_storage(storage)).trials
    assert sorted(t.params["lambda"] for t in trials if t.state.name == "COMPLETE") == grid
    (lost,) = [t for t in trials if t.state.name == "FAIL"]
    runs = Tracker().client.search_runs([Tracker().experiment_id("local_kill")])
    assert not [r for r in runs if r.info.status == "RUNNING"]
    killed = Tracker().client.get_run(lost.user_attrs[MLFLOW_RUN])
    assert killed.info.status == "KILLED" and "lost (killed by signal 9)" in killed.data.tags["error"]


@pytest.mark.slow
def test_dashboard_serves_the_studies_on_loopback(tmp_path: Path) -> None:
    """`harness dashboard` starts optuna-dashboard on 127.0.0.1 over the harness's storage."""
    import json
    import urllib.request

    storage = tmp_path / "optuna.journal"
    optuna.create_study(study_name="shown.tiny", storage=open_storage(str(storage)))
    port = free_port()
    args = [sys.executable, "-m", "harness", "dashboard", "--storage", str(storage), "--port", str(port)]
    with process(args, tmp_path / "dashboard.log") as dashboard:
        wait_for_http(f"http://127.0.0.1:{port}/api/studies", timeout=60, proc=dashboard)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies") as answer:
            studies = json.loads(answer.read())["study_summaries"]
    assert [s["study_name"] for s in studies] == ["shown.tiny"]
