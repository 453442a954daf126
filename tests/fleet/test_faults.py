"""Issue 26: what clusters do to a study, on docker-compose.yml's topology run as local processes (a real
PostgreSQL 15, `mlflow server` on it, a coordinator with `--workers 0`, `harness worker`s; heartbeat 1 s,
a tiny BERT): workers SIGKILLed, SIGTERMed and frozen, the coordinator SIGTERMed and SIGKILLed, PostgreSQL
and the MLflow server restarted, a database outage longer than the retry window, ten processes starting
together on an empty database. Each ends with every grid point COMPLETE once, no RUNNING MLflow run and
an honest exit code. Coordinators run in this process where the test can (one Python start-up less);
workers are processes, since signals are what is tested."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import traceback
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml

from harness.fleet import forked
from harness.fleet.recovery import HISTORY, LOST, MLFLOW_RUN, STRAY, TAKEN_OVER, WORKER
from harness.study.optuna_study import is_surplus, open_storage
from harness.tracking.tracker import Tracker
from tests.helpers import harness_here, tiny_study
from tests.launcher import Launched, forked_calls
from tests.services import REPO, Compose, Postgres, process

SERVICES = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
QUICK = ["quick"]  # final scores on STS-B test alone: these tests check processes and bookkeeping
HOST = socket.gethostname()
pytestmark = pytest.mark.slow  # all on one worker (tests/scheduling.py): one MLflow server


@pytest.fixture(scope="module")
def compose(postgres: Postgres, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Compose]:
    """The compose topology's MLflow server (restartable, with authentication) on the session's PostgreSQL,
    one for the module (each test has its own study and experiment; a server takes ~10 s to start); its
    account's credentials in this process's environment, which the workers inherit."""
    state = tmp_path_factory.mktemp("compose")
    topology = Compose(SERVICES, postgres, state, {"HEARTBEAT": "1", "THREADS": "1", "PROFILE": "tiny"})
    topology.start_mlflow()
    with pytest.MonkeyPatch.context() as env:  # the workers' account on the server, for every process here
        for name, value in topology.environment("coordinator").items():
            env.setenv(name, value)
        yield topology
    topology.stop_mlflow()


def _study(tmp_path: Path, tiny_bert: Path, name: str, points: int) -> tuple[str, list[float]]:
    grid = [round(0.1 * (i + 1), 1) for i in range(points)]
    path = tiny_study(tmp_path, tiny_bert, {"lambda": grid}, name=name, max_steps=6, eval_every=3,
                      final_tasks=QUICK)  # fmt: skip
    return path, grid


def _scenario(
    compose: Compose, tmp_path: Path, tiny_bert: Path, name: str, points: int
) -> tuple[str, list[float], list[str], str, Path]:
    """The study file, its grid, the compose coordinator's command, its storage URL and a log folder."""
    study, grid = _study(tmp_path, tiny_bert, name, points)
    coordinator = compose.command("coordinator", STUDY=study)
    return study, grid, coordinator, _storage(coordinator), _log_folder(tmp_path)


def _storage(command: list[str]) -> str:
    return command[command.index("--storage") + 1]


def _trials(storage: str, name: str) -> list[optuna.trial.FrozenTrial]:
    try:
        return optuna.load_study(study_name=f"{name}.tiny", storage=open_storage(storage)).trials
    except KeyError:  # not created yet
        return []


def _until(check: Callable[[], object], what: str, timeout: float = 240.0) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def _running_with_run(storage: str, name: str, pid: int | None = None) -> optuna.trial.FrozenTrial | None:
    """A RUNNING trial whose MLflow run id is recorded (of worker `pid`, when given)."""
    for trial in _trials(storage, name):
        mine = pid is None or trial.user_attrs.get(WORKER) == f"{HOST}:{pid}"
        if trial.state.name == "RUNNING" and MLFLOW_RUN in trial.user_attrs and mine:
            return trial
    return None


def _check_the_end(storage: str, name: str, grid: list[float], tracking: str) -> tuple[list, list]:
    """Every grid point COMPLETE once, no RUNNING run, one FINISHED trial run per point, parent FINISHED."""
    trials = _trials(storage, name)
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["lambda"] for t in complete) == grid
    assert not [t for t in trials if t.state.name in ("RUNNING", "WAITING")]
    tracker = Tracker(tracking)
    experiment = tracker.client.get_experiment_by_name(name)
    runs = tracker.client.search_runs([experiment.experiment_id], max_results=200)
    assert not [r.info.run_name for r in runs if r.info.status == "RUNNING"]
    trial_runs = [r for r in runs if r.data.tags.get("harness.role") == "trial"]
    assert sum(r.info.status == "FINISHED" for r in trial_runs) == len(grid)
    (parent,) = [r for r in runs if r.data.tags.get("harness.role") == "study"]
    assert parent.info.status == "FINISHED" and "outcome" not in parent.data.tags, parent.data.tags
    return trials, runs


def _rerun_of(trials: list, lost: optuna.trial.FrozenTrial) -> optuna.trial.FrozenTrial:
    """The one trial queued to run `lost`'s point again: the last of its `retry_history` is `lost` (Optuna's
    retry copies keep `failed_trial` along a chain: when a re-run is itself lost, as once when worker C
    froze on B's re-run, the re-run of the re-run still names B's trial there)."""
    (rerun,) = [t for t in trials if t.system_attrs.get(HISTORY, [None])[-1] == lost.number]
    assert rerun.params == lost.params
    return rerun


def _log_folder(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    return tmp_path / "logs"


def _logs(folder: Path) -> None:
    for log in sorted(folder.iterdir()):
        print(f"--- {log.name}\n{log.read_text(errors='replace')[-2500:]}")


def test_workers_killed_terminated_and_frozen(compose: Compose, tmp_path: Path, tiny_bert: Path) -> None:
    """Four workers and a coordinator started together (the compose cold start); worker A SIGKILLed after
    creating its trial's MLflow run but before recording its id, B SIGTERMed, C SIGSTOPped past the grace
    period then SIGCONTed, D left alone."""
    name = "faults_workers"
    study, grid = _study(tmp_path, tiny_bert, name, 6)
    storage = _storage(compose.command("coordinator", STUDY=study))
    # each victim waits at its point until the test acts (A: its run made, the id not recorded yet);
    # D, and C once woken, run the rest
    pauses = {"A": "trial_run_created=60", "B": "trial_started=60", "C": "trial_started=6"}
    worker = compose.command("worker-0", STUDY=study)
    tracker = Tracker(compose.uri)
    events: dict[str, float] = {}  # signal times, and the trial A was killed in

    def faults(a: subprocess.Popen, b: subprocess.Popen, c: subprocess.Popen) -> None:
        def run_without_id() -> optuna.trial.FrozenTrial | None:  # A's run exists, its id not recorded yet
            experiment = tracker.client.get_experiment_by_name(name)
            for trial in _trials(storage, name):
                ours = trial.state.name == "RUNNING" and trial.user_attrs.get(WORKER) == f"{HOST}:{a.pid}"
                if ours and MLFLOW_RUN not in trial.user_attrs and experiment is not None:
                    query = f"tags.worker = '{HOST}:{a.pid}' and tags.trial = '{trial.number}'"
                    if tracker.client.search_runs([experiment.experiment_id], query):
                        return trial
            return None

        events["killed_trial"] = _until(run_without_id, "worker A in a trial").number
        a.send_signal(signal.SIGKILL)
        events["kill"] = time.time()
        _until(lambda: _running_with_run(storage, name, b.pid), "worker B in a trial")
        b.send_signal(signal.SIGTERM)
        events["term"] = time.time()
        frozen = _until(lambda: _running_with_run(storage, name, c.pid), "worker C in a trial")
        c.send_signal(signal.SIGSTOP)
        events["stop"] = time.time()

        def taken() -> bool:
            return any(t.number == frozen.number and t.state.name == "FAIL" for t in _trials(storage, name))

        _until(taken, "C's trial taken for lost")
        c.send_signal(signal.SIGCONT)
        events["cont"] = time.time()

    logs = _log_folder(tmp_path)
    with (
        process(worker, logs / "A.log", {"HARNESS_PAUSE_AT": pauses["A"]}) as a,
        process(worker, logs / "B.log", {"HARNESS_PAUSE_AT": pauses["B"]}) as b,
        process(worker, logs / "C.log", {"HARNESS_PAUSE_AT": pauses["C"]}) as c,
        process(worker, logs / "D.log") as d,
        ThreadPoolExecutor(1) as background,
    ):
        done = background.submit(faults, a, b, c)
        coordinator = harness_here(*compose.command("coordinator", STUDY=study)[3:])
        (logs / "coordinator.log").write_text(coordinator.stdout + coordinator.stderr)
        for proc in (b, c, d):
            proc.wait(timeout=120)
        _logs(logs)
        done.result()
    assert coordinator.returncode == 0 and c.returncode == 0 and d.returncode == 0
    assert a.returncode == -signal.SIGKILL and b.returncode == 143
    assert "terminated (SIGTERM): re-run the same command to resume" in (logs / "B.log").read_text()
    assert "Traceback" not in "".join(p.read_text() for p in logs.iterdir())

    trials, runs = _check_the_end(storage, name, grid, compose.uri)
    real = [t for t in trials if not is_surplus(t)]  # not the grid trials that found their point taken
    by_worker = {p: [t for t in real if t.user_attrs.get(WORKER) == f"{HOST}:{p.pid}"] for p in (a, b, c)}
    (lost_a,) = [t for t in by_worker[a] if t.state.name == "FAIL"]
    assert lost_a.number == events["killed_trial"]
    (run_a,) = [r for r in runs if r.data.tags.get("worker") == f"{HOST}:{a.pid}"]
    assert MLFLOW_RUN not in lost_a.user_attrs  # found by its tags, not by the recorded id
    assert run_a.info.status == "KILLED" and "lost (no heartbeat for 3 s)" in run_a.data.tags["error"]
    (stopped_b,) = by_worker[b]
    rerun_b = _rerun_of(trials, stopped_b)
    assert "terminated by SIGTERM" in rerun_b.user_attrs[LOST]
    run_b = tracker.client.get_run(stopped_b.user_attrs[MLFLOW_RUN])
    assert run_b.info.status == "KILLED" and run_b.data.tags["error"].startswith("terminated by SIGTERM")
    (frozen,) = [t for t in by_worker[c] if t.state.name == "FAIL"]
    run_c = tracker.client.get_run(frozen.user_attrs[MLFLOW_RUN])
    assert run_c.info.status == "KILLED" and "lost (no heartbeat for 3 s)" in run_c.data.tags["error"]
    assert TAKEN_OVER in (logs / "C.log").read_text()
    for key, lost in (("kill", lost_a), ("term", stopped_b), ("stop", frozen)):
        again = _rerun_of(trials, lost).datetime_start.timestamp() - events[key]
        print(f"recovery ({key}): the trial started again {again:.1f} s after the signal")


def test_coordinator_terminated_then_killed_then_run_again(
    compose: Compose, tmp_path: Path, tiny_bert: Path
) -> None:
    """SIGTERM: exit 143, the parent run KILLED saying so, the worker goes on; SIGKILL mid-study; the same
    command again finishes the study with nothing run twice."""
    name = "faults_coordinator"
    study, grid, coordinator, storage, logs = _scenario(compose, tmp_path, tiny_bert, name, 4)
    pause = {"HARNESS_PAUSE_AT": "trial_started=2"}
    tracker = Tracker(compose.uri)

    def parent() -> object:
        experiment = tracker.client.get_experiment_by_name(name)
        runs = tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")
        return runs[0]

    def terminate_this_process() -> None:
        _until(lambda: _running_with_run(storage, name), "a trial")
        os.kill(os.getpid(), signal.SIGTERM)  # inside harness_here's main(): SIGTERM handled as Ctrl-C

    with process(compose.command("worker-0", STUDY=study), logs / "worker.log", pause) as worker:
        with ThreadPoolExecutor(1) as background:
            background.submit(terminate_this_process)
            first = harness_here(*coordinator[3:], env=pause)
        assert first.returncode == 143, first.stderr
        assert (
            first.stderr.strip().splitlines()[-1] == "terminated (SIGTERM): re-run the same command to resume"
        )
        stopped = parent()
        assert stopped.info.status == "KILLED"
        assert stopped.data.tags["outcome"] == "terminated by SIGTERM: re-run the same command to resume"

        with process(coordinator, logs / "killed.log", pause) as second:
            _until(lambda: parent().info.status == "RUNNING", "the second coordinator reopening the parent")
            second.send_signal(signal.SIGKILL)
            second.wait(timeout=30)
        started = time.monotonic()
        third = harness_here(*coordinator[3:], env=pause)
        print(f"the third coordinator ended {time.monotonic() - started:.1f} s after it started")
        worker.wait(timeout=120)
    _logs(logs)
    assert third.returncode == 0 and worker.returncode == 0, third.stderr
    assert "Traceback" not in third.stderr
    _check_the_end(storage, name, grid, compose.uri)


def test_database_and_tracking_server_restarts_are_ridden_out(
    compose: Compose, postgres: Postgres, tmp_path: Path, tiny_bert: Path
) -> None:
    """`pg_ctl restart -m fast` during one trial and an `mlflow server` stopped and started during another:
    no traceback, no second command, at most one warning line per outage."""
    name = "faults_restarts"
    study, grid, coordinator, storage, logs = _scenario(compose, tmp_path, tiny_bert, name, 2)
    pause = {"HARNESS_PAUSE_AT": "trial_started=2"}
    away: dict[str, float] = {}

    def restarts() -> None:
        first = _until(lambda: _running_with_run(storage, name), "a trial")
        away["postgres"] = postgres.restart(down_for=1.0)
        _until(lambda: (t := _running_with_run(storage, name)) and t.number != first.number, "another trial")
        away["mlflow"] = compose.restart_mlflow()

    with process(compose.command("worker-0", STUDY=study), logs / "worker.log", pause) as worker:
        with ThreadPoolExecutor(1) as background:
            done = background.submit(restarts)
            result = harness_here(*coordinator[3:], env=pause)
            done.result()
        worker.wait(timeout=240)
    (logs / "coordinator.log").write_text(result.stdout + result.stderr)
    _logs(logs)
    print(f"away: PostgreSQL {away['postgres']:.1f} s, MLflow server {away['mlflow']:.1f} s")
    assert result.returncode == 0 and worker.returncode == 0, result.stderr
    for log in ("coordinator.log", "worker.log"):
        text = (logs / log).read_text()
        assert "Traceback" not in text and "error:" not in text
        assert text.count("warning: Optuna storage") <= 1
    _check_the_end(storage, name, grid, compose.uri)


def test_a_tracking_server_that_exits_at_its_start_is_started_again(compose: Compose) -> None:
    """bench/chaos.py's finding (64 workers, seed 1): an MLflow server restarted in the middle of other
    faults exited 1 at its start and stayed down, for the soak and for compose, which had no restart
    policy for it. Compose restarts it on failure now, and so does the soak's restart (tests/services.py):
    here its port is held by another listener for 15 s, and the server answers there once it is free."""
    failed: list[str] = []
    compose.stop_mlflow()
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", compose.port))
    holder.listen()
    freed = threading.Timer(15.0, holder.close)  # past the first start (~10 s to import and bind)
    freed.start()
    try:
        away = compose.restart_mlflow(failed.append)
    finally:
        freed.join()
        holder.close()
    assert failed and all("exited with" in why and "its log ends:" in why for why in failed), failed
    assert away >= 15.0
    with urllib.request.urlopen(f"{compose.uri}/health", timeout=10) as answer:
        assert answer.status == 200
    for service in ("postgres", "mlflow", "dashboard", "worker-0"):
        assert SERVICES[service]["restart"] == "on-failure", service
    assert SERVICES["coordinator"]["restart"] == "on-failure:5"


def test_a_database_outage_past_the_retry_window(postgres: Postgres, tmp_path: Path, tiny_bert: Path) -> None:
    """PostgreSQL down for longer than HARNESS_DB_RETRY_SECONDS (3 s here) mid-trial: one warning line,
    then one error line, exit 1, the trial's and the parent's MLflow runs KILLED with the reason (MLflow is
    on its own sqlite store here, so they can be closed); the same command once it is back finishes."""
    name = "faults_outage"
    postgres.execute(f"CREATE DATABASE {name}")
    storage = postgres.url(name)
    study, grid = _study(tmp_path, tiny_bert, name, 2)
    args = ("run-study", study, "--storage", storage, "--heartbeat", "1", "--no-progress")
    env = {"HARNESS_PAUSE_AT": "trial_started=1", "HARNESS_DB_RETRY_SECONDS": "3"}
    down = threading.Event()

    def outage() -> None:
        _until(lambda: _running_with_run(storage, name), "a trial")
        postgres.stop_server()
        down.set()

    with ThreadPoolExecutor(1) as background:
        background.submit(outage)
        stopped = harness_here(*args, env=env)
    assert down.is_set()
    postgres.start_server()
    print(stopped.stdout + stopped.stderr)
    assert stopped.returncode == 1
    errors = [line for line in stopped.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "re-run the same command once the database is back" in errors[0]
    assert (
        errors[0].startswith("error: Optuna storage postgresql+psycopg2://")
        and "unreachable for 3 s" in errors[0]
    )
    assert stopped.stderr.count("warning: Optuna storage") == 1 and "Traceback" not in stopped.stderr
    tracker = Tracker()
    runs = tracker.client.search_runs([tracker.experiment_id(name)])
    assert {r.info.status for r in runs} == {"KILLED"}
    assert all("unreachable for 3 s" in (r.data.tags.get("error") or r.data.tags["outcome"]) for r in runs)

    again = harness_here(*args, env={"HARNESS_DB_RETRY_SECONDS": "3"})
    assert again.returncode == 0, again.stderr
    _check_the_end(storage, name, grid, tracker.uri)


def test_a_tracking_server_outage_past_mlflows_retries(
    compose: Compose, tmp_path: Path, tiny_bert: Path
) -> None:
    """The MLflow server stopped mid-trial for longer than MLflow's client retries (none here:
    MLFLOW_HTTP_REQUEST_MAX_RETRIES=0; ~4 min by default): the worker ends with one line, exit 1; its trial
    is queued again by heartbeat, its run closed once the server is back, and the same worker command,
    run again, finishes the study."""
    name = "faults_tracking"
    study, grid, coordinator, storage, logs = _scenario(compose, tmp_path, tiny_bert, name, 2)
    worker = compose.command("worker-0", STUDY=study)
    no_retries = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}
    outage: dict[str, object] = {}

    restarted = contextlib.ExitStack()  # the second worker is stopped with the first if the test fails

    def stop_then_start_again(first: Launched) -> Launched:
        _until(lambda: _running_with_run(storage, name), "a trial")
        compose.stop_mlflow()
        outage["code"] = first.wait(timeout=120)
        compose.start_mlflow()
        return restarted.enter_context(process(worker, logs / "second.log"))  # the same command

    first_env = {**no_retries, "HARNESS_PAUSE_AT": "trial_started=3"}
    with restarted, process(worker, logs / "first.log", first_env) as first:
        with ThreadPoolExecutor(1) as background:
            again = background.submit(stop_then_start_again, first)
            result = harness_here(*coordinator[3:], env=no_retries)
            second = again.result()
        second.wait(timeout=240)
    (logs / "coordinator.log").write_text(result.stdout + result.stderr)
    _logs(logs)
    assert outage["code"] == 1 and result.returncode == 0 and second.returncode == 0, result.stderr
    said = (logs / "first.log").read_text()
    (line,) = [line for line in said.splitlines() if line.startswith("error:")]
    assert line.startswith("error: MLflow tracking server unreachable (API request to http://127.0.0.1:")
    assert line.endswith("re-run the same command once it is back") and "Traceback" not in said
    trials, runs = _check_the_end(storage, name, grid, compose.uri)
    (lost,) = [t for t in trials if t.state.name == "FAIL" and not is_surplus(t)]
    lost_run = Tracker(compose.uri).client.get_run(lost.user_attrs[MLFLOW_RUN])
    assert (
        lost_run.info.status == "KILLED"
        and "lost" in lost_run.data.tags["error"]
        or (STRAY in lost_run.data.tags["error"])
    )


def _open_storage_together(url: str, start: Any) -> str:
    try:
        start.wait(60)  # all ten at once
        open_storage(url, 1)
        return ""
    except BaseException:
        return traceback.format_exc()


def test_ten_processes_starting_together_create_the_schema_once(postgres: Postgres) -> None:
    """The cold start of `docker compose up` (or of `run-study --workers 10`): ten processes open the
    Optuna storage of an empty database at the same instant (a barrier releases them together); each gets
    it, and the schema is made once. They are forked from the harness's fork server as local workers are
    (the race is the database's; ten fresh interpreters cost 16 s of CPU in imports)."""
    postgres.execute("CREATE DATABASE cold_start")
    url = postgres.url("cold_start")
    start = forked._fork_server().Barrier(10)
    failures = [text for text in forked_calls(_open_storage_together, *[(url, start)] * 10) if text]
    assert not failures, failures[0][-2000:]
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    with engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("SELECT count(*) FROM version_info")).scalar() == 1
        assert connection.execute(sqlalchemy.text("SELECT count(*) FROM alembic_version")).scalar() == 1
    engine.dispose()
