"""Load: N `harness worker` processes against one PostgreSQL and one coordinator, with trials that sleep
instead of training, so that what is measured is the study's bookkeeping (issue 46, item 4).

    .venv/bin/python bench/fleet_load.py [--workers 16,32,64] [--trials 3] [--sleep 5] [--heartbeat 2]
        [--max-connections 100] [--mlflow-workers 1] [--auth-cache-ttl S] [--timeout 420] [--logs DIR]
        [--json OUT]

About 3 minutes for the default 16, 32 and 64 workers on a 2-core AMD EPYC (its memory: +4 GB at 64).

The topology is docker-compose.yml's, run as local processes on 127.0.0.1 (tests/services.py): a
throw-away PostgreSQL 15 with `max_connections` 100 (PostgreSQL's own default and the postgres:15 image's;
docker-compose.yml raises it: --max-connections 300 to measure that), the compose file's MLflow server on
it (basic-auth app with deploy/mlflow/basic_auth.ini; one server process, as tests/services.Compose starts
it, where the compose file's runs MLflow's default 4: --mlflow-workers), ONE coordinator (`harness
run-study STUDY --workers 0 --storage ... --tracking-uri ... --heartbeat H --no-progress`) and N workers
(`harness worker STUDY ... --heartbeat H --threads 1 --wait 600 --no-progress`), all released at the same
instant, as `docker compose up` starts them. Each N gets a fresh Optuna database (`optuna_nN`) and its own
study: a grid of `--trials` x N points over `lambda` of the tests' tiny-BERT study (tests/helpers.py
tiny_study). Everything in a trial is real (Optuna ask/tell on PostgreSQL, heartbeats, the grid sampler's
point check, the trial's MLflow run with its params, tags, config.yaml, metrics, results.json and end, the
save_top_k query) except training and evaluation: `harness.study.trial.train_evaluate_log` sleeps
`--sleep` seconds in two halves, logging the dev score between them (and reporting it to Optuna) and the
final metrics and results.json after, as the real one does.

On 2 cores, 64 Python interpreters importing torch would cost minutes of CPU and too much memory, so
this process imports the harness once (harness.fleet.forked's PRELOAD), applies the patch, and
`os.fork()`s the coordinator and the workers while no thread pool and no database connection exist in it
(the tiny BERT is made in a subprocess); each child waits until all are forked, runs the real
`harness.commands.cli.main` with its argv and `os._exit`s with its exit code. Each process names itself to
PostgreSQL through PGAPPNAME (coordinator, worker-K, mlflow-server, fleet_load), so pg_stat_activity says
who holds which connection. Everything shares this machine's cores: where it is busy near 100%, the
figures are this machine's limit, not PostgreSQL's or the coordinator's (the CPU line says whose).

What it prints for each N:
  wall                all released -> the last process's exit, and the first trial's start -> the last
                      trial's end (the steady part), in seconds; when the workers' first trials started
  trials/min          trials completed per minute over the wall time, over the steady part, and the ideal
                      N x 60 / sleep (every worker always sleeping); efficiency = steady / ideal
  bookkeeping s/trial a COMPLETE trial's wall time (Optuna's datetime_complete - datetime_start) minus the
                      sleep: trial creation (datetime_start is taken before its wait for the study row's
                      lock), the sampler's point check, the MLflow run, params, artifacts, metrics, the
                      run's end, tell (median, p95, max); `between trials` is a worker's gap from one
                      trial's end to its next trial's start (gc, fail_stale_trials, the count of what is left)
  connections         client backends in pg_stat_activity (`backend_type = 'client backend'`, this
                      process's one included), polled every 0.5 s: max and median; by phase (before the
                      first trial started, while trials ran, after the last ended) the max, the most one
                      worker held and the max by role; at the overall max, who held them (role, database,
                      state); the connections of the worker that held the most; how many backends each
                      process opened over the run (churn)
  heartbeat lag       the gap between two consecutive heartbeats of a running trial (Optuna's
                      trial_heartbeats, written with the database's clock) minus the interval: median, p95,
                      max; `oldest` is the largest age of a running trial's newest heartbeat seen by a poll
                      minus the interval (a beat that never came counts here); a trial is taken for lost
                      at 3 intervals of silence, i.e. at a lag of 2 intervals
  cpu                 CPU seconds of the workers, the coordinator, the MLflow server and PostgreSQL (and
                      per trial), and the machine's busy share of its cores
  memory              the most memory in use (MemTotal - MemAvailable) above the level before the forks
  mlflow requests     the MLflow server's requests by path (its access log), per trial; its 4xx/5xx answers
                      (404s of lookups left out), "too many clients" and tracebacks in its log; how long it
                      stayed busy after the processes ended (a backlog)
  database            pg_stat_statements over the run: calls and execution seconds by database, the
                      statements with the most execution time (lock waits count: that is where contention
                      shows) and the most calls, with calls per trial and mean ms; `active statements`:
                      what the polls found running, by role (where the time goes, sampled)
  check               every grid point COMPLETE exactly once, no RUNNING/WAITING trial left, FINISHED MLflow
                      trial runs == points, no RUNNING MLflow run, every exit code 0, none still running at
                      --timeout, no Traceback in the processes' logs (OK or FAILED); the FAIL trials (surplus
                      grid draws, lost and re-run) are counted; then the log lines with "error", "Traceback"
                      or "too many clients" (the first ones shown)
Then a table of the Ns, and a projection to 100 GPU workers: connections from the largest run that did
not fill PostgreSQL, CPU a trial from the largest run that completed, for trials of 1, 5 and 60 minutes.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections import Counter
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared" / "data").resolve()
TOKENIZER = DATA / "tokenizers" / "bert-base-uncased"
POLL = 0.5  # seconds between the polls of pg_stat_activity and trial_heartbeats
TICK = os.sysconf("SC_CLK_TCK")
LOG_PROBLEM = re.compile(r"error|traceback|too many clients", re.IGNORECASE)
SLEEP = [5.0]  # the trial's sleep (--sleep), set before the forks

MAKE_BERT = """
import sys, torch
from transformers import AutoTokenizer, BertConfig, BertModel
torch.manual_seed(0)
config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=128)
BertModel(config).save_pretrained(sys.argv[1])
AutoTokenizer.from_pretrained(sys.argv[2]).save_pretrained(sys.argv[1])
"""


# --------------------------------------------------------------------------------------------- the trial
def sleeping_train_and_evaluate(run_spec: Any, ctx: Any, run: Any, report: Any, number: int = 0) -> Any:
    """harness.study.train_evaluate_log without training or evaluation: `SLEEP` seconds in two
    halves; between them the dev evaluation's logging (`objective` and the dev metric, then the report
    to Optuna), after them the final metrics, results.json and the save_top_k rule's query."""
    from harness.tracking.metric_names import OBJECTIVE

    metric = f"dev.{run_spec.plan.scoring.target}"
    flat = json.dumps(run_spec.flat(), sort_keys=True, default=str).encode()
    value = 0.5 + zlib.crc32(flat) / 2**33  # a score of this configuration, in [0.5, 1)
    time.sleep(SLEEP[0] / 2)
    run.log_metrics({OBJECTIVE: value, metric: value}, step=1)
    report(1, value)
    time.sleep(SLEEP[0] / 2)
    final = {
        f"{metric}.best": value,
        OBJECTIVE: value,
        "train.best_step": 1,
        "train.steps": 2,
        "train.seconds": SLEEP[0],
    }
    run.log_metrics(final, step=2)
    run.log_text(json.dumps({"slept_seconds": SLEEP[0], metric: value}, indent=2), "results.json")
    ctx.keep_model(value)  # among_best: the completed trials, read from the storage
    return {**final, **{name: value for name in ctx.objectives}}


# ------------------------------------------------------------------------------------------ processes
def fork_command(argv: list[str], log: Path, name: str, gate: tuple[int, int]) -> int:
    """`harness *argv` in a forked child (its output in `log`, PGAPPNAME `name`); returns its pid. The child
    waits until `gate` (a pipe) is closed by every process that holds its write end, so that all start
    together once all are forked, then runs the real command line and its exit handlers and `os._exit`s
    with the command's exit code."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.close(gate[1])
        os.read(gate[0], 1)  # end of file: the gate is open
        os.close(gate[0])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.environ["PGAPPNAME"] = name
        sys.argv = ["harness", *argv]
        from harness.commands.cli import main

        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with suppress(BaseException):
            atexit._run_exitfuncs()
        with suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
    os._exit(code)


def in_child(function: Any, *args: Any) -> Any:
    """`function(*args)` in a forked child, its JSON answer read back: database and MLflow clients are
    made there, so this process holds none when it forks the next run's workers."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            answer = {"ok": True, "value": function(*args)}
        except BaseException:
            answer = {"ok": False, "value": traceback.format_exc()}
        with os.fdopen(write, "w") as out:
            json.dump(answer, out, default=str)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as source:
        text = source.read()
    os.waitpid(pid, 0)
    answer = json.loads(text)
    if not answer["ok"]:
        raise RuntimeError(answer["value"])
    return answer["value"]


def stop_children(live: dict[int, Any]) -> None:
    for pid in live:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while live and time.monotonic() < deadline:
        for pid in list(live):
            if os.waitpid(pid, os.WNOHANG)[0]:
                del live[pid]
        time.sleep(0.2)
    for pid in live:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


# ---------------------------------------------------------------------------------------- measurements
def proc_stat(pid: str) -> tuple[int, int, float, float] | None:
    """(parent pid, session id, own CPU s, reaped children's CPU s) of a process, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    own = (int(fields[11]) + int(fields[12])) / TICK
    reaped = (int(fields[13]) + int(fields[14])) / TICK
    return int(fields[1]), int(fields[3]), own, reaped


def service_cpu(postmaster: int, mlflow_session: int) -> dict[str, float]:
    """CPU seconds so far of this PostgreSQL (its postmaster and its children, and the backends it reaped)
    and of the MLflow server (every process of its session, and the children they reaped)."""
    cpu = {"postgres": 0.0, "mlflow server": 0.0}
    for entry in os.listdir("/proc"):
        stat = proc_stat(entry) if entry.isdigit() else None
        if stat is None:
            continue
        parent, session, own, reaped = stat
        if int(entry) == postmaster or parent == postmaster:
            cpu["postgres"] += own + reaped
        elif session == mlflow_session:
            cpu["mlflow server"] += own + reaped
    return cpu


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the machine since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    total = sum(values[:8])
    return (total - values[3] - values[4]) / TICK, total / TICK


def memory_used_gb() -> float:
    info = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    return (int(info["MemTotal"].split()[0]) - int(info["MemAvailable"].split()[0])) / 2**20


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def role_of(name: str) -> str:
    return "workers" if name.startswith("worker-") else (name or "(unnamed)")


class Monitor:
    """The polls of one run: PostgreSQL's connections, its active statements, the running trials'
    heartbeats, memory; on a connection of its own to the run's database, opened after the forks."""

    def __init__(self, postgres: Any, database: str, heartbeat: int) -> None:
        self.postgres, self.database = postgres, database
        self.connection: Any = None  # opened by the first poll (retried by the next when refused)
        self.heartbeat = heartbeat
        self.totals: list[int] = []
        self.samples: list[tuple[float, int, int, dict[str, int]]] = []  # time, total, one worker's, roles
        self.backends: dict[str, set[int]] = {}  # application name -> the backend pids it had (churn)
        self.worst_worker: list[str] = []  # the connections of the worker that held the most, then
        self.at_max: Counter[str] = Counter()
        self.worker_max = 0
        self.roles_max: Counter[str] = Counter()
        self.active: Counter[str] = Counter()
        self.idle_in_transaction = 0
        self.beats: dict[int, float] = {}  # trial id -> its newest heartbeat (database epoch seconds)
        self.gaps: list[float] = []
        self.oldest = -float("inf")
        self.first_beat: list[float] = []
        self.memory: list[float] = []
        self.failed_polls: list[str] = []

    def poll(self) -> None:
        import psycopg2

        self.memory.append(memory_used_gb())
        if self.connection is None:
            self.connection = psycopg2.connect(
                host="127.0.0.1",
                port=self.postgres.port,
                user=self.postgres.user,
                dbname=self.database,
                application_name="fleet_load",
            )
            self.connection.autocommit = True
        with self.connection.cursor() as cursor:
            cursor.execute(
                "SELECT application_name, state, query, pid, datname FROM pg_stat_activity "
                "WHERE backend_type = 'client backend'"
            )
            rows = cursor.fetchall()
            self._connections(rows)
            try:
                cursor.execute(
                    "SELECT t.trial_id, EXTRACT(EPOCH FROM h.heartbeat), "
                    "EXTRACT(EPOCH FROM now()::timestamp), EXTRACT(EPOCH FROM t.datetime_start) "
                    "FROM trials t LEFT JOIN trial_heartbeats h "
                    "ON h.trial_id = t.trial_id WHERE t.state = 'RUNNING'"
                )
            except psycopg2.errors.UndefinedTable:  # the coordinator has not made the schema yet
                return
            for trial, beat, now, started in cursor.fetchall():
                self._heartbeat(trial, beat, now, started)

    def _connections(self, rows: list[tuple[str, str, str, int, str]]) -> None:
        self.totals.append(len(rows))
        roles = Counter(role_of(name) for name, *_ in rows)
        workers = Counter(name for name, *_ in rows if name.startswith("worker-"))
        most = max(workers.values(), default=0)
        if most > self.worker_max:
            worst = workers.most_common(1)[0][0]
            self.worst_worker = [
                f"{state}: {' '.join(q.split())[:70]}" for n, state, q, *_ in rows if n == worst
            ]
        self.worker_max = max(self.worker_max, most)
        self.samples.append((time.time(), len(rows), most, dict(roles)))
        for role, count in roles.items():
            self.roles_max[role] = max(self.roles_max[role], count)
        if len(rows) >= max(self.totals):
            self.at_max = Counter(f"{role_of(name)} {db} {state or '-'}" for name, state, _, _, db in rows)
        for name, state, query, pid, _ in rows:
            self.backends.setdefault(name, set()).add(pid)
            if state == "active" and name != "fleet_load":
                self.active[f"{role_of(name)}: {' '.join(query.split())[:90]}"] += 1
            self.idle_in_transaction += state == "idle in transaction"

    def _heartbeat(self, trial: int, beat: float | None, now: float, started: float | None) -> None:
        if beat is None:
            return
        beat, now = float(beat), float(now)
        self.oldest = max(self.oldest, now - beat - self.heartbeat)
        before = self.beats.get(trial)
        if before is None and started is not None:
            self.first_beat.append(beat - float(started))
        elif before is not None and beat > before:
            self.gaps.append(beat - before - self.heartbeat)
        self.beats[trial] = beat

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


# ------------------------------------------------------------------------------------------- the checks
def outcome(storage: str, optuna_name: str, experiment: str, tracking: str) -> dict[str, Any]:
    """The study as Optuna and MLflow hold it after the run (in a forked child: see `in_child`)."""
    import optuna

    from harness.fleet.recovery import LOST, WORKER
    from harness.study.optuna_study import is_surplus
    from harness.tracking.tracker import Tracker

    trials = optuna.load_study(study_name=optuna_name, storage=storage).trials
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    client = Tracker(tracking).client
    found = client.get_experiment_by_name(experiment)
    runs = client.search_runs([found.experiment_id], max_results=5000) if found else []
    trial_runs = [r for r in runs if r.data.tags.get("harness.role") == "trial"]
    parent = [r for r in runs if r.data.tags.get("harness.role") == "study"]
    return {
        "complete": [t.params["lambda"] for t in complete],
        "states": dict(Counter(t.state.name for t in trials)),
        "surplus": sum(is_surplus(t) for t in trials),
        "lost": sum(LOST in t.user_attrs for t in trials),
        "times": [
            (t.user_attrs.get(WORKER, "?"), t.datetime_start.timestamp(), t.datetime_complete.timestamp())
            for t in complete
        ],
        "run_states": dict(Counter(r.info.status for r in trial_runs)),
        "running_runs": sum(r.info.status == "RUNNING" for r in runs),
        "parent": [(r.info.status, r.data.tags.get("outcome", "")) for r in parent],
    }


def statements(postgres: Any) -> list[tuple[str, int, float, float, int]]:
    """pg_stat_statements since its reset: (database, calls, total ms, mean ms, query), most time first."""
    import psycopg2

    connection = psycopg2.connect(
        host="127.0.0.1",
        port=postgres.port,
        user=postgres.user,
        dbname="postgres",
        application_name="fleet_load",
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT d.datname, s.calls, s.total_exec_time, s.mean_exec_time, s.query "
                "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname <> 'postgres' ORDER BY s.total_exec_time DESC"
            )
            return cursor.fetchall()
    finally:
        connection.close()


def log_problems(logs: Path) -> tuple[Counter[str], list[str]]:
    """Lines with "error", "Traceback" or "too many clients" in the processes' logs: counts and examples."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for log in sorted(logs.glob("*.log")):
        for line in log.read_text(errors="replace").splitlines():
            for word in ("too many clients", "traceback", "error"):
                if word in line.lower():
                    counts[word] += 1
            if LOG_PROBLEM.search(line):
                examples.setdefault(" ".join(line.split())[:150], log.stem)
    shown = [f"{name}: {line}" for line, name in list(examples.items())[:6]]
    return counts, shown


# ---------------------------------------------------------------------------------------------- one run
def run_once(n: int, args: argparse.Namespace, setup: dict[str, Any]) -> dict[str, Any]:
    """One study of `args.trials` x n sleeping trials, run by one coordinator and n workers; its figures."""
    from tests.helpers import tiny_study

    postgres, compose, folder = setup["postgres"], setup["compose"], setup["folder"]
    points = args.trials * n
    grid = [round((i + 1) / (points + 1), 6) for i in range(points)]
    name = f"fleet_load_n{n}"
    study = tiny_study(folder, setup["bert"], {"lambda": grid}, name=name, final_tasks=["quick"])
    database = f"optuna_n{n}"
    postgres.execute(f"CREATE DATABASE {database}")
    env = {"STUDY": study, "HEARTBEAT": str(args.heartbeat), "THREADS": "1"}
    coordinator = compose.command("coordinator", **env)
    worker = compose.command("worker-0", **env)
    storage = coordinator[coordinator.index("--storage") + 1].rsplit("/", 1)[0] + f"/{database}"
    for command in (coordinator, worker):
        command[command.index("--storage") + 1] = storage
    logs = Path(args.logs) / f"n{n}"
    logs.mkdir(parents=True, exist_ok=True)
    mlflow_log_file = compose.logs / "mlflow.log"
    mlflow_offset = mlflow_log_file.stat().st_size
    postgres.execute("SELECT pg_stat_statements_reset()")
    if threading.active_count() != 1:
        raise RuntimeError(f"threads alive before the forks: {threading.enumerate()}")
    gc.collect()
    gc.freeze()  # what the forks inherit: out of every child's collections (no copy-on-write of it)

    memory_before = memory_used_gb()
    cpu_before, busy_before = service_cpu(setup["postmaster"], setup["mlflow_session"]), machine_busy()
    gate = os.pipe()
    forking = time.time()
    live = {fork_command(coordinator[3:], logs / "coordinator.log", "coordinator", gate): "coordinator"}
    for k in range(1, n + 1):
        live[fork_command(worker[3:], logs / f"worker-{k}.log", f"worker-{k}", gate)] = f"worker-{k}"
    started = time.time()  # all forked: they start together, as `docker compose up` starts its services
    forked = started - forking
    os.close(gate[1])
    os.close(gate[0])
    monitor = Monitor(postgres, database, args.heartbeat)
    codes: dict[str, int] = {}
    cpu: Counter[str] = Counter()
    try:
        while live and time.time() - started < args.timeout:
            poll_started = time.monotonic()
            try:
                monitor.poll()
            except Exception as exc:  # noqa: BLE001 - a failed poll is counted and skipped
                monitor.failed_polls.append(f"{type(exc).__name__}: {str(exc).strip()[:120]}")
                if monitor.connection is not None and monitor.connection.closed:
                    monitor.connection = None  # connect again at the next poll
            for pid, who in list(live.items()):
                done, status, usage = os.wait4(pid, os.WNOHANG)
                if done:
                    codes[who] = os.waitstatus_to_exitcode(status)
                    role = "coordinator" if who == "coordinator" else "workers"
                    cpu[role] += usage.ru_utime + usage.ru_stime
                    del live[pid]
            time.sleep(max(0.0, POLL - (time.monotonic() - poll_started)))
    finally:
        timed_out = sorted(live.values())
        stop_children(live)
        monitor.close()
    wall = time.time() - started
    backlog = drained(setup["mlflow_session"], setup["postmaster"])  # before the check's requests
    after = service_cpu(setup["postmaster"], setup["mlflow_session"])
    cpu.update({k: v - cpu_before[k] for k, v in after.items()})
    busy_after = machine_busy()
    measured = {
        "n": n,
        "grid": grid,
        "wall": wall,
        "forked": forked,
        "found": in_child(outcome, storage, f"{name}.tiny", name, compose.uri),
        "monitor": monitor,
        "codes": codes,
        "timed_out": timed_out,
        "cpu": cpu,
        "busy": (busy_after[0] - busy_before[0]) / max(1e-9, busy_after[1] - busy_before[1]),
        "memory": max(monitor.memory, default=memory_before) - memory_before,
        "queries": statements(postgres),
        "mlflow": mlflow_log(mlflow_log_file, mlflow_offset),
        "backlog": backlog,
        "started": started,
        "logs": logs,
    }
    return summarise(measured, args)


def mlflow_log(log: Path, offset: int) -> tuple[Counter[str], Counter[str]]:
    """The MLflow server's requests since `offset` of its log, by method and path (run ids cut), and its
    problems: responses by 4xx/5xx status, "too many clients" and "Traceback" lines."""
    with open(log, "rb") as source:
        source.seek(offset)
        text = source.read().decode(errors="replace")
    found = re.findall(r'"([A-Z]+) (/[^ ?"]*)[^"]*" (\d{3})', text)
    requests = Counter(
        f"{method} {re.sub(r'/artifacts/.*', '/artifacts/...', path)}" for method, path, _ in found
    )
    problems = Counter(f"HTTP {status}" for _, _, status in found if status >= "400" and status != "404")
    problems["too many clients"] = text.count("too many clients")
    problems["Traceback"] = text.count("Traceback")
    return requests, +problems


def drained(mlflow_session: int, postmaster: int, limit: float = 300.0) -> float:
    """Seconds until the MLflow server has worked off what the stopped processes left it (under 0.2 CPU
    s a second for 2 s), at most `limit`."""
    started = time.monotonic()
    last, quiet = service_cpu(postmaster, mlflow_session)["mlflow server"], 0
    while time.monotonic() - started < limit and quiet < 2:
        time.sleep(1.0)
        now = service_cpu(postmaster, mlflow_session)["mlflow server"]
        quiet, last = (quiet + 1 if now - last < 0.2 else 0), now
    return time.monotonic() - started


def spread(values: list[float]) -> dict[str, float]:
    return {
        "median": percentile(values, 0.5),
        "p95": percentile(values, 0.95),
        "max": max(values, default=float("nan")),
    }


def churn(backends: dict[str, set[int]]) -> dict[str, Any]:
    """How many backends (connections) each process opened over the run, as the polls saw them."""
    workers = [len(pids) for name, pids in backends.items() if name.startswith("worker-")]
    out: dict[str, Any] = {k: len(v) for k, v in backends.items() if not k.startswith("worker-")}
    out["a worker (median, max)"] = [percentile(workers, 0.5), max(workers, default=0)]
    return out


def phases(monitor: Monitor, first: float, last: float) -> dict[str, dict[str, Any]]:
    """Connections before the first trial started (start-up), while trials ran, and after the last ended."""
    out: dict[str, dict[str, Any]] = {}
    for phase, inside in (
        ("start-up", lambda t: t < first),
        ("trials", lambda t: first <= t <= last),
        ("drain", lambda t: t > last),
    ):
        chosen = [s for s in monitor.samples if inside(s[0])]
        roles: Counter[str] = Counter()
        for _, _, _, by_role in chosen:
            for role, count in by_role.items():
                roles[role] = max(roles[role], count)
        out[phase] = {
            "polls": len(chosen),
            "max": max((s[1] for s in chosen), default=0),
            "max_one_worker": max((s[2] for s in chosen), default=0),
            "max_by_role": dict(roles),
        }
    return out


def summarise(m: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The figures of one run (`run_once`), as printed and written to --json."""
    n, grid, found, monitor = m["n"], m["grid"], m["found"], m["monitor"]
    times = found["times"]
    done = len(times)
    bookkeeping = [end - start - args.sleep for _, start, end in times]
    by_worker: dict[str, list[tuple[float, float]]] = {}
    for who, start, end in times:
        by_worker.setdefault(who, []).append((start, end))
    between = []
    for spans in by_worker.values():
        spans.sort()
        between += [later[0] - earlier[1] for earlier, later in zip(spans, spans[1:], strict=False)]
    first = min((s for _, s, _ in times), default=float("inf"))
    last = max((e for _, _, e in times), default=float("-inf"))
    span = last - first if times else float("nan")
    counted = Counter(found["complete"])
    missing = sorted(set(grid) - set(counted))
    twice = sorted(v for v, c in counted.items() if c > 1)
    left = {k: v for k, v in found["states"].items() if k in ("RUNNING", "WAITING")}
    finished_runs = found["run_states"].get("FINISHED", 0)
    bad_codes = {who: code for who, code in m["codes"].items() if code != 0}
    problems, examples = log_problems(m["logs"])
    ok = not (missing or twice or left or found["running_runs"] or bad_codes or m["timed_out"])
    ok = ok and finished_runs == len(grid) and not problems.get("traceback")
    total_ms = sum(q[2] for q in m["queries"]) or 1.0

    def statement(db: str, calls: int, total: float, mean: float, query: str) -> dict[str, Any]:
        return {
            "database": db,
            "calls": calls,
            "calls_per_trial": calls / max(1, done),
            "total_s": total / 1000,
            "share": total / total_ms,
            "mean_ms": mean,
            "query": " ".join(query.split())[:160],
        }

    by_database: Counter[str] = Counter()
    for db, calls, total, _, _ in m["queries"]:
        by_database[f"{db} calls"] += calls
        by_database[f"{db} s"] += total / 1000
    requests, server_problems = m["mlflow"]
    joined = sorted(min(s for s, _ in spans) - m["started"] for spans in by_worker.values())
    return {
        "workers": n,
        "points": len(grid),
        "sleep_s": args.sleep,
        "heartbeat_s": args.heartbeat,
        "wall_s": m["wall"],
        "fork_s": m["forked"],
        "steady_s": span,
        "completed": done,
        "trials_per_min": 60 * done / m["wall"],
        "steady_trials_per_min": 60 * done / span if done > 1 else float("nan"),
        "ideal_trials_per_min": n * 60 / args.sleep,
        "bookkeeping_s": spread(bookkeeping),
        "between_trials_s": spread(between),
        "trials_per_worker": [
            min(map(len, by_worker.values()), default=0),
            max(map(len, by_worker.values()), default=0),
        ],
        "connections": {
            "max": max(monitor.totals, default=0),
            "median": statistics.median(monitor.totals) if monitor.totals else 0,
            "polls": len(monitor.totals),
            "failed_polls": monitor.failed_polls[:5],
            "at_max": dict(monitor.at_max.most_common()),
            "max_by_role": dict(monitor.roles_max),
            "max_one_worker": monitor.worker_max,
            "phases": phases(monitor, first, last),
            "idle_in_transaction_samples": monitor.idle_in_transaction,
            "worst_worker_at_its_max": monitor.worst_worker,
            "backends_opened": churn(monitor.backends),
        },
        "heartbeat_lag_s": {
            "beats": len(monitor.gaps),
            **spread(monitor.gaps),
            "oldest": monitor.oldest,
            "first_beat_max": max(monitor.first_beat, default=float("nan")),
        },
        "active_statement_samples": dict(monitor.active.most_common(8)),
        "statements_by_time": [statement(*q) for q in m["queries"][:6]],
        "statements_by_calls": [statement(*q) for q in sorted(m["queries"], key=lambda q: -q[1])[:6]],
        "statements_by_database": dict(by_database),
        "workers_with_a_trial": len(by_worker),
        "first_trial_after_s": spread(joined),
        "mlflow_requests": sum(requests.values()),
        "mlflow_server_problems": dict(server_problems),
        "mlflow_busy_after_s": m["backlog"],
        "mlflow_requests_by_path": dict(requests.most_common(12)),
        "cpu_s": dict(m["cpu"]),
        "machine_busy": m["busy"],
        "cores": os.cpu_count() or 1,
        "memory_gb": m["memory"],
        "check": {
            "ok": ok,
            "missing": missing,
            "twice": twice,
            "left_running_or_waiting": left,
            "states": found["states"],
            "surplus": found["surplus"],
            "lost_and_rerun": found["lost"],
            "finished_trial_runs": finished_runs,
            "trial_run_states": found["run_states"],
            "running_runs": found["running_runs"],
            "parent": found["parent"],
            "exit_codes_not_0": bad_codes,
            "timed_out": m["timed_out"],
        },
        "log_lines": dict(problems),
        "log_examples": examples,
        "logs": str(m["logs"]),
    }


# ---------------------------------------------------------------------------------------------- output
def show(row: dict[str, Any]) -> None:
    b, g, c, h, k = (
        row[key] for key in ("bookkeeping_s", "between_trials_s", "connections", "heartbeat_lag_s", "check")
    )
    done = max(1, row["completed"])
    print(
        f"\n=== {row['workers']} workers: {row['points']} trials of {row['sleep_s']:g} s sleep, "
        f"heartbeat {row['heartbeat_s']} s ==="
    )
    print(
        f"wall                {row['wall_s']:.1f} s (after {row['fork_s']:.2f} s of forks); first trial "
        f"start -> last trial end {row['steady_s']:.1f} s"
    )
    j = row["first_trial_after_s"]
    print(
        f"trials              {row['completed']} completed; per worker {row['trials_per_worker'][0]}-"
        f"{row['trials_per_worker'][1]}; {row['workers_with_a_trial']} of {row['workers']} workers ran one, "
        f"their first starting {j['median']:.1f} s (median), {j['max']:.1f} s (max) after the forks"
    )
    eff = row["steady_trials_per_min"] / row["ideal_trials_per_min"]
    print(
        f"trials/min          {row['trials_per_min']:.1f} over the wall, {row['steady_trials_per_min']:.1f} "
        f"steady; ideal {row['ideal_trials_per_min']:.0f}; efficiency {eff:.0%}"
    )
    print(
        f"bookkeeping s/trial median {b['median']:.2f}, p95 {b['p95']:.2f}, max {b['max']:.2f}; "
        f"between trials median {g['median']:.2f}, p95 {g['p95']:.2f}, max {g['max']:.2f}"
    )
    print(
        f"connections         max {c['max']}, median {c['median']:g} ({c['polls']} polls, "
        f"{len(c['failed_polls'])} failed); most of one worker {c['max_one_worker']}"
    )
    for phase, p in c["phases"].items():
        print(
            f"  {phase:17s} max {p['max']:3d} ({p['polls']} polls); most of one worker "
            f"{p['max_one_worker']}; max by role {p['max_by_role']}"
        )
    print(f"  at the max        {c['at_max']}")
    print(f"  one worker's most {c['worst_worker_at_its_max']}")
    print(f"  backends opened   {c['backends_opened']} over the run (polls every {POLL} s)")
    for failure in c["failed_polls"]:
        print(f"  failed poll       {failure}")
    print(
        f"heartbeat lag       {h['beats']} gaps: median {h['median']:.2f} s, p95 {h['p95']:.2f} s, max "
        f"{h['max']:.2f} s; oldest newest-beat {h['oldest']:.2f} s over the interval; first beat <= "
        f"{h['first_beat_max']:.2f} s after the start"
    )
    per = ", ".join(f"{key} {v:.0f} s ({v / done:.2f}/trial)" for key, v in row["cpu_s"].items())
    print(f"cpu                 {per}; machine busy {row['machine_busy']:.0%} of {row['cores']} cores")
    print(f"memory              +{row['memory_gb']:.1f} GB at most over the level before the forks")
    print(
        f"mlflow requests     {row['mlflow_requests']} ({row['mlflow_requests'] / done:.1f}/trial): "
        + ", ".join(f"{path} {count}" for path, count in row["mlflow_requests_by_path"].items())
    )
    print(
        f"mlflow server       problems {row['mlflow_server_problems'] or 'none'}; busy "
        f"{row['mlflow_busy_after_s']:.0f} s after the processes ended"
    )
    print(
        "database            "
        + ", ".join(f"{key} {v:.0f}" for key, v in row["statements_by_database"].items())
    )
    for title, key in (("most time", "statements_by_time"), ("most calls", "statements_by_calls")):
        print(f"  {title}:")
        for q in row[key]:
            print(
                f"  {q['share']:4.0%} {q['total_s']:6.1f} s {q['calls']:7d} calls "
                f"({q['calls_per_trial']:6.1f}/trial, {q['mean_ms']:.2f} ms) {q['database']}: "
                f"{q['query'][:90]}"
            )
    print("active statements   (polls that found them running)")
    for query, count in row["active_statement_samples"].items():
        print(f"  {count:4d}  {query}")
    verdict = "OK" if k["ok"] else "FAILED"
    stuck = f"; still running at the timeout: {', '.join(k['timed_out'])}" if k["timed_out"] else ""
    print(
        f"check               {verdict}: {len(k['missing'])} grid points missing, {len(k['twice'])} "
        f"completed twice, {k['left_running_or_waiting'] or 'no'} RUNNING/WAITING left; trial states "
        f"{k['states']} (surplus {k['surplus']}, lost and re-run {k['lost_and_rerun']}); FINISHED trial "
        f"runs {k['finished_trial_runs']} of {row['points']}, RUNNING runs {k['running_runs']}; parent "
        f"{k['parent']}; exit codes not 0: {k['exit_codes_not_0'] or 'none'}{stuck}"
    )
    print(f"log lines           {row['log_lines'] or 'none'} (logs: {row['logs']})")
    for line in row["log_examples"]:
        print(f"  {line}")


def table(rows: list[dict[str, Any]]) -> None:
    print(
        "\nworkers trials wall s  trials/min wall steady ideal  bookkeeping s med p95  conns max med  "
        "hb lag s p95 max  check"
    )
    for r in rows:
        b, c, h = r["bookkeeping_s"], r["connections"], r["heartbeat_lag_s"]
        print(
            f"{r['workers']:7d} {r['completed']:6d} {r['wall_s']:6.0f}  {r['trials_per_min']:15.1f} "
            f"{r['steady_trials_per_min']:6.1f} {r['ideal_trials_per_min']:5.0f}  {b['median']:17.2f} "
            f"{b['p95']:5.2f}  {c['max']:9d} {c['median']:4.0f}  {h['p95']:12.2f} {h['max']:4.2f}  "
            f"{'OK' if r['check']['ok'] else 'FAILED'}"
        )


def projection(rows: list[dict[str, Any]], max_connections: int) -> None:
    """What the runs say about 100 workers (one a GPU) on the same services: connections from the largest
    run that completed without filling PostgreSQL, CPU a trial from the largest run that completed."""
    done_rows = [r for r in rows if r["check"]["ok"]]
    if not done_rows:
        print("\nprojection to 100 GPU workers: no run completed; nothing to project from")
        return
    roomy = [r for r in done_rows if r["connections"]["max"] < max_connections] or done_rows
    c = max(roomy, key=lambda row: row["workers"])
    during = c["connections"]["phases"]["trials"]["max_by_role"]
    others = sum(v for k, v in during.items() if k != "workers")
    per_worker = during.get("workers", 0) / c["workers"]
    full = "" if c["connections"]["max"] < max_connections else " (that run filled the server: a floor)"
    print(f"\nprojection to 100 GPU workers (connections from {c['workers']} workers{full}):")
    print(
        f"  connections: {per_worker:.2f} a worker while trials ran + {others} others (coordinator, MLflow "
        f"server, this bench) -> ~{others + 100 * per_worker:.0f} for 100 workers, max_connections "
        f"{max_connections}"
    )
    r = max(done_rows, key=lambda row: row["workers"])
    done = max(1, r["completed"])
    server = {k: r["cpu_s"].get(k, 0) / done for k in ("postgres", "mlflow server")}
    print(
        f"  CPU a trial ({r['workers']} workers): PostgreSQL {server['postgres']:.2f} s, MLflow server "
        f"{server['mlflow server']:.2f} s; bookkeeping in a trial {r['bookkeeping_s']['median']:.2f} s, "
        f"between trials {r['between_trials_s']['median']:.2f} s (on this machine's shared cores)"
    )
    for minutes in (1, 5, 60):
        rate = 100 / (minutes * 60)
        print(
            f"  trials of {minutes:2d} min: {rate * 60:5.1f} trials/min from 100 GPUs -> PostgreSQL "
            f"{rate * server['postgres']:.2f} cores, MLflow server {rate * server['mlflow server']:.2f} cores"
        )


# ---------------------------------------------------------------------------------------------- set-up
def cpu_line() -> str:
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next(
        (line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")),
        "unknown",
    )
    flags = next((line for line in out.splitlines() if line.startswith("Flags")), "")
    memory = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    return (
        f"CPU: {model}; avx512_bf16 {'yes' if ' avx512_bf16' in flags else 'no'}; {os.cpu_count()} cores; "
        f"{memory:.0f} GB memory"
    )


def set_up(args: argparse.Namespace, folder: Path, cleanup: ExitStack) -> dict[str, Any]:
    """The services (PostgreSQL with pg_stat_statements, the compose MLflow server; stopped by `cleanup`),
    the tiny BERT, and the harness imported and patched in this process."""
    import yaml

    from tests.services import Compose, Postgres, postgres_missing

    if postgres_missing():
        sys.exit(f"cannot start PostgreSQL here: {postgres_missing()}")
    bert = folder / "tiny-bert"
    # made in a process of its own: torch's thread pool must not exist in this one, which forks
    made = subprocess.run([sys.executable, "-c", MAKE_BERT, str(bert), str(TOKENIZER)], capture_output=True)
    if made.returncode:
        sys.exit(f"could not make the tiny BERT:\n{made.stderr.decode(errors='replace')}")
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    postgres = Postgres(services["postgres"]["environment"]["POSTGRES_USER"])
    cleanup.callback(postgres.stop)
    postgres.start(max_connections=args.max_connections)
    postgres.execute((REPO / "deploy/postgres/init.sql").read_text())
    postgres.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
    postgres.restart()
    postgres.execute("CREATE EXTENSION pg_stat_statements")
    compose = Compose(services, postgres, folder / "compose", {"PROFILE": "tiny"})
    if args.mlflow_workers != 1:  # tests/services.Compose starts one server process; the compose file 4
        command = compose.command

        def with_workers(service: str, **env: str) -> list[str]:
            out = command(service, **env)
            return [*out[:-1], str(args.mlflow_workers)] if service == "mlflow" else out

        compose.command = with_workers  # type: ignore[method-assign]
    ini = next(Path(v) for k, v in compose.exact.items() if k.endswith("mlflow_auth.ini"))
    if args.auth_cache_ttl is not None:  # MLflow basic-auth's credential cache, instead of the deployed one
        text = re.sub(r"(?m)^auth_cache_ttl_seconds\s*=.*\n?", "", ini.read_text())
        ini.write_text(text.rstrip("\n") + f"\nauth_cache_ttl_seconds = {args.auth_cache_ttl}\n")
    ttl = re.search(r"(?m)^auth_cache_ttl_seconds\s*=\s*(\d+)", ini.read_text())
    print(f"MLflow basic-auth credential cache (auth_cache_ttl_seconds): {ttl.group(1) if ttl else 0} s")
    os.environ["PGAPPNAME"] = "mlflow-server"
    cleanup.callback(compose.stop_mlflow)
    compose.start_mlflow()
    del os.environ["PGAPPNAME"]
    leader = next(p for p in os.listdir("/proc") if p.isdigit() and _mlflow_leader(p, compose.port))
    session = proc_stat(leader)
    assert session is not None
    os.environ.update(compose.environment("coordinator"))  # the account on the server, for every child
    # what a worker and a coordinator import (harness.fleet.forked.PRELOAD), once, here; then the patch
    import importlib

    from harness.fleet import forked

    for module in forked.PRELOAD[:-1]:
        importlib.import_module(module)
    import harness.study.trial

    harness.study.trial.train_evaluate_log = sleeping_train_and_evaluate
    SLEEP[0] = args.sleep
    return {
        "postgres": postgres,
        "compose": compose,
        "bert": bert,
        "folder": folder,
        "mlflow_session": session[1],
        "postmaster": int((postgres.root / "data" / "postmaster.pid").read_text().split()[0]),
    }


def _mlflow_leader(pid: str, port: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"server" in command and str(port).encode() in command and any(b"mlflow" in c for c in command)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="16,32,64", help="comma list of worker counts, one run each")
    parser.add_argument("--trials", type=int, default=3, help="trials per worker (grid points = trials x N)")
    parser.add_argument("--sleep", type=float, default=5.0, help="seconds a trial sleeps instead of training")
    parser.add_argument("--heartbeat", type=int, default=2, help="--heartbeat of the coordinator and workers")
    parser.add_argument("--max-connections", type=int, default=100, help="PostgreSQL's max_connections")
    parser.add_argument(
        "--timeout", type=float, default=420, help="seconds a run may take before it is stopped"
    )
    parser.add_argument(
        "--mlflow-workers",
        type=int,
        default=1,
        help="MLflow server processes (tests/services.Compose: 1; docker-compose.yml: MLflow's default, 4)",
    )
    parser.add_argument(
        "--auth-cache-ttl",
        type=int,
        help="MLflow basic-auth's auth_cache_ttl_seconds instead of deploy/mlflow/basic_auth.ini's (0: off)",
    )
    parser.add_argument("--logs", help="folder for the processes' logs (default: a temporary folder, kept)")
    parser.add_argument("--json", help="write every figure to this JSON file")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))  # tests.services, tests.helpers
    for name, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1",
    }.items():
        os.environ.setdefault(name, value)
    os.environ.setdefault("HARNESS_DATA_DIR", str(DATA))
    folder = Path(tempfile.mkdtemp(prefix="fleet-load-"))
    os.environ["HARNESS_HOME"] = str(folder / ".harness")
    args.logs = args.logs or str(folder / "logs")
    print(cpu_line())
    print(
        f"PostgreSQL 15, max_connections {args.max_connections}; MLflow server: the compose command, "
        f"{args.mlflow_workers} process(es); trials sleep {args.sleep:g} s; heartbeat {args.heartbeat} s; "
        f"{args.trials} trials a worker"
    )
    rows = []
    with ExitStack() as cleanup:
        setup = set_up(args, folder, cleanup)
        for n in [int(v) for v in args.workers.split(",")]:
            rows.append(run_once(n, args, setup))
            show(rows[-1])
            sys.stdout.flush()
    table(rows)
    projection(rows, args.max_connections)
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": cpu_line(), "rows": rows}, indent=1, default=str))


if __name__ == "__main__":
    main()
