"""Chaos soak (issue 59): N workers run one grid study for T minutes on docker-compose.yml's topology as
local processes (tests/services.py: PostgreSQL 15, the compose file's MLflow server with basic auth) while a
seeded schedule of faults hits them at random times, overlapping; then the history is checked.

    .venv/bin/python bench/chaos.py [--workers 16] [--minutes 5] [--seed 1] [--sleep 4] [--heartbeat 2]
        [--real 2] [--faults KINDS] [--every 20] [--json OUT] [--plot OUT.png] [--logs DIR]

The fault kinds (`--faults`, default all), each at a random time (exponential gaps of mean `--every`
seconds) with a random target and duration drawn from `--seed`:
  worker_kill         SIGKILL a random worker; a new one joins 2 s later (the cluster restarts the pod)
  worker_freeze       SIGSTOP a random worker for 1-4 heartbeat intervals (past 3: its trial is lost), SIGCONT
  worker_term         SIGTERM a random worker (preemption with a grace period: it ends its trial and exits);
                      a new one joins 2 s later
  worker_term_kill    SIGTERM, then SIGKILL 0.3 s later (preemption without grace); a new one joins
  coordinator_kill    SIGKILL the coordinator, then the same command again 2 s later
  postgres_fast       `pg_ctl restart -m fast`, down 0-3 s
  postgres_immediate  `pg_ctl stop -m immediate` (a crash: recovery at start), down 0-3 s, start
  mlflow_restart      the MLflow server stopped and started on the same port
  network_cut         the TCP proxy between every process and PostgreSQL closes every connection and refuses
                      new ones for 1-8 s
  commit_lost         the proxy lets the next 1-3 COMMITs of a trial's end reach PostgreSQL and drops
                      their answers (the exactly-once writes of issue 46)
  disk_full           the MLflow server's artifact store (a 64 MB tmpfs) filled for 3-15 s, then freed

The trials sleep `--sleep` seconds (bench/fleet_load.py's trial: Optuna, MLflow, heartbeats real; no
training), but `--real` grid points train and evaluate the tiny BERT (bench/chaos_trial.py). The grid is
sized to keep the workers busy for `--minutes`; the coordinator's lease TTL is 10 s (HARNESS_LEASE_TTL), so
that a killed coordinator's successor takes over within the soak.

The history check (`check`): every grid point COMPLETE exactly once in Optuna; exactly one FINISHED MLflow
trial run per COMPLETE trial (by trial number); every other trial run KILLED or FAILED with an error tag and
ended after some fault began (else: unaccounted); no run RUNNING; the parent run FINISHED; every process
exited (no orphan), no lock file left in their harness home, no idle-in-transaction connection and no
advisory lock left in PostgreSQL; each real point's metrics equal to the same point run alone afterwards
(same seed, one thread). Printed: faults by
kind, points lost and duplicated, recovery (fault start -> the next trial COMPLETE after it) p50/p95 by kind,
throughput over time (`--plot`). A failing history is printed as the events that led to it; the seed
reproduces the schedule.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "bench")]  # tests.services, fleet_load, chaos_trial

import fleet_load  # noqa: E402

KINDS = ("worker_kill", "worker_freeze", "worker_term", "worker_term_kill", "coordinator_kill",
         "postgres_fast", "postgres_immediate", "mlflow_restart", "network_cut", "commit_lost",
         "disk_full")  # fmt: skip
RESPAWN = 2.0  # seconds before a killed or preempted worker's replacement starts
LEASE_TTL = "10"
ARTIFACT_STORE_MB = 64
SERVICE_LOCKS = {"postgres": threading.Lock(), "mlflow": threading.Lock()}


@dataclass
class Fault:
    at: float  # seconds after the start
    kind: str
    duration: float = 0.0
    target: int = 0  # which worker (an index into the live ones), or how many COMMITs


@dataclass
class Event:
    at: float
    what: str


def schedule(seed: int, minutes: float, every: float, kinds: list[str], heartbeat: float) -> list[Fault]:
    """The faults of a soak, from `seed` alone: exponential gaps of mean `every`, kinds in turn from a
    shuffled cycle (each kind about as often as the others), random durations and targets."""
    rng = random.Random(seed)
    faults, at, cycle = [], rng.expovariate(1 / every), []
    while at < minutes * 60 - 10:
        if not cycle:
            cycle = list(kinds)
            rng.shuffle(cycle)
        kind = cycle.pop()
        duration = {"worker_freeze": rng.uniform(1, 4) * heartbeat, "network_cut": rng.uniform(1, 8),
                    "disk_full": rng.uniform(3, 15), "postgres_fast": rng.uniform(0, 3),
                    "postgres_immediate": rng.uniform(0, 3)}.get(kind, 0.0)  # fmt: skip
        faults.append(Fault(round(at, 2), kind, round(duration, 2), rng.randrange(1 << 16)))
        at += rng.expovariate(1 / every)
    return faults


def lose_commits(proxy: Any, count: int) -> None:
    """The next `count` trial-end COMMITs reach PostgreSQL; their answers are lost (tests/fault_proxy)."""
    proxy.arm(b"UPDATE trials SET state='COMPLETE'", count)


@dataclass
class Soak:
    """The processes of one soak and what happened to them."""

    args: argparse.Namespace
    env: dict[str, str]
    logs: Path
    coordinator_argv: list[str]
    worker_argv: list[str]
    start: float = field(default_factory=time.time)
    workers: list[Any] = field(default_factory=list)
    ended: list[tuple[str, int, int | None]] = field(default_factory=list)  # (name, pid, exit code)
    coordinator: Any = None
    coordinators: list[Any] = field(default_factory=list)  # every coordinator started, the killed ones too
    replaced: set[int] = field(default_factory=set)  # workers that failed and were replaced
    events: list[Event] = field(default_factory=list)
    count: int = 0

    def note(self, what: str) -> None:
        self.events.append(Event(round(time.time() - self.start, 2), what))

    def launch(self, argv: list[str], name: str) -> Any:
        from harness.fleet import forked

        return forked.start(argv, {**self.env, "PGAPPNAME": name}, self.logs / f"{name}.log")

    def add_worker(self) -> None:
        self.count += 1
        self.workers.append(self.launch(self.worker_argv, f"worker-{self.count}"))

    def start_coordinator(self) -> None:
        self.coordinator = self.launch(self.coordinator_argv, f"coordinator-{len(self.coordinators) + 1}")
        self.coordinators.append(self.coordinator)

    def reap(self) -> None:
        """Workers that ended (a worker exits when the study is done) leave the live list."""
        for worker in list(self.workers):
            if worker.poll() is not None:
                self.ended.append((str(worker.log.stem), worker.pid, worker.returncode))
                self.workers.remove(worker)

    def victim(self, fault: Fault) -> Any | None:
        self.reap()
        return self.workers[fault.target % len(self.workers)] if self.workers else None


def inject(soak: Soak, fault: Fault, services: dict[str, Any]) -> None:
    """One fault, as its kind says (see the module's docstring); replacements started in threads."""
    kind, later = fault.kind, threading.Timer
    if kind.startswith("worker_"):
        worker = soak.victim(fault)
        if worker is None:
            return
        soak.note(f"{kind} {worker.log.stem} (pid {worker.pid}) for {fault.duration:g} s")
        if kind == "worker_kill":
            worker.send_signal(signal.SIGKILL)
        elif kind == "worker_freeze":
            worker.send_signal(signal.SIGSTOP)
            later(
                fault.duration,
                lambda: (worker.send_signal(signal.SIGCONT), soak.note(f"SIGCONT {worker.log.stem}")),
            ).start()
            return
        else:
            worker.send_signal(signal.SIGTERM)
            if kind == "worker_term_kill":
                later(0.3, lambda: worker.send_signal(signal.SIGKILL)).start()
        later(RESPAWN, soak.add_worker).start()
    elif kind == "coordinator_kill":
        if soak.coordinator is None or soak.coordinator.poll() is not None:
            return
        soak.note(f"coordinator_kill (pid {soak.coordinator.pid})")
        soak.coordinator.send_signal(signal.SIGKILL)
        later(RESPAWN, soak.start_coordinator).start()
    elif kind in ("postgres_fast", "postgres_immediate"):
        with SERVICE_LOCKS["postgres"]:  # one server: a restart during a restart is the same restart
            postgres = services["postgres"]
            soak.note(f"{kind}, down {fault.duration:g} s")
            mode = "fast" if kind == "postgres_fast" else "immediate"
            data = str(postgres.root / "data")
            postgres._run(str(postgres.bin / "pg_ctl"), "-D", data, "-m", mode, "-w", "stop")
            time.sleep(fault.duration)
            postgres.start_server()
            soak.note(f"{kind}: up again")
    elif kind == "mlflow_restart":
        with SERVICE_LOCKS["mlflow"]:
            soak.note("mlflow_restart")
            away = services["compose"].restart_mlflow(
                lambda why: soak.note(
                    f"mlflow_restart: the server exited at its start ({why}); started again"
                )
            )
            soak.note(f"mlflow_restart: up again after {away:.1f} s")
    elif kind == "network_cut":
        soak.note(f"network_cut for {fault.duration:g} s")
        services["proxy"].cut(fault.duration)
    elif kind == "commit_lost":
        count = 1 + fault.target % 3
        soak.note(f"commit_lost: the next {count} trial-end COMMIT answer(s)")
        lose_commits(services["proxy"], count)
    elif kind == "disk_full":
        ballast = services["artifacts"] / ".ballast"
        soak.note(f"disk_full for {fault.duration:g} s")
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={ballast}", "bs=1M", f"count={ARTIFACT_STORE_MB}"],
            capture_output=True,
        )  # fmt: skip  (stops at the full disk)
        later(
            fault.duration, lambda: (ballast.unlink(missing_ok=True), soak.note("disk_full: freed"))
        ).start()


# ------------------------------------------------------------------------------------------ the services
def set_up(args: argparse.Namespace, folder: Path, cleanup: contextlib.ExitStack) -> dict[str, Any]:
    """PostgreSQL (max_connections 400), the proxy in front of it, the compose MLflow server with its
    artifact store on a 64 MB tmpfs, the tiny BERT, the study; everything stopped by `cleanup`."""
    import yaml

    from tests.helpers import tiny_study
    from tests.services import Compose, Postgres, postgres_missing

    if postgres_missing():
        sys.exit(f"cannot start PostgreSQL here: {postgres_missing()}")
    bert = folder / "tiny-bert"
    made = subprocess.run([sys.executable, "-c", fleet_load.MAKE_BERT, str(bert), str(fleet_load.TOKENIZER)],
                          capture_output=True)  # fmt: skip
    if made.returncode:
        sys.exit(f"could not make the tiny BERT:\n{made.stderr.decode(errors='replace')}")
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    postgres = Postgres(services["postgres"]["environment"]["POSTGRES_USER"])
    cleanup.callback(postgres.stop)
    postgres.start(max_connections=400)
    postgres.execute((REPO / "deploy/postgres/init.sql").read_text())
    from tests.fault_proxy import CommitDropProxy

    proxy = CommitDropProxy(postgres.port)
    cleanup.callback(proxy.close)
    state = folder / "compose"
    artifacts = state / "mlartifacts"
    artifacts.mkdir(parents=True)
    tmpfs = ["mount", "-t", "tmpfs", "-o", f"size={ARTIFACT_STORE_MB}m", "tmpfs", str(artifacts)]
    mounted = subprocess.run(tmpfs, capture_output=True)
    if mounted.returncode:
        sys.exit(f"disk_full needs a tmpfs for the artifact store (root): {mounted.stderr.decode().strip()}")
    cleanup.callback(lambda: subprocess.run(["umount", "-l", str(artifacts)], capture_output=True))
    compose = Compose(services, postgres, state, {"PROFILE": "tiny"})
    cleanup.callback(compose.stop_mlflow)
    compose.start_mlflow()
    points = max(args.workers, int(args.workers * args.minutes * 60 / args.sleep * 0.8))
    grid = [round((i + 1) / (points + 1), 6) for i in range(points)]
    real = [grid[int(k * len(grid) / args.real)] for k in range(args.real)] if args.real else []
    study = tiny_study(folder, bert, {"lambda": grid}, name="chaos", final_tasks=["quick"], max_steps=2,
                       eval_every=1)  # fmt: skip
    env = {"STUDY": study, "HEARTBEAT": str(args.heartbeat), "THREADS": "1"}
    coordinator, worker = compose.command("coordinator", **env), compose.command("worker-0", **env)
    storage = coordinator[coordinator.index("--storage") + 1]
    proxied = storage.replace(f"127.0.0.1:{postgres.port}", f"127.0.0.1:{proxy.port}")
    for command in (coordinator, worker):
        command[command.index("--storage") + 1] = proxied
    return {"postgres": postgres, "proxy": proxy, "compose": compose, "artifacts": artifacts, "grid": grid,
            "real": real, "study": study, "bert": bert, "storage": storage, "coordinator": coordinator[3:],
            "worker": worker[3:]}  # fmt: skip


def children_env(args: argparse.Namespace, services: dict[str, Any], folder: Path) -> dict[str, str]:
    """Every process's environment: the account on the MLflow server, the short lease, the chaos trial."""
    return {**os.environ, **services["compose"].environment("coordinator"), "HARNESS_LEASE_TTL": LEASE_TTL,
            "CHAOS_SLEEP": str(args.sleep), "CHAOS_REAL": ",".join(map(str, services["real"])),
            "HARNESS_HOME": str(folder / ".harness"),
            "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "bench")])}  # fmt: skip


# ------------------------------------------------------------------------------------------- the progress
class Progress:
    """The study's COMPLETE trials over time, polled on a direct connection to PostgreSQL (not the proxy)."""

    def __init__(self, postgres: Any, database: str) -> None:
        self.postgres, self.database = postgres, database
        self.connection: Any = None
        self.complete: list[tuple[float, int]] = []  # (time, COMPLETE trials)

    def poll(self) -> None:
        import psycopg2

        try:
            if self.connection is None or self.connection.closed:
                self.connection = psycopg2.connect(host="127.0.0.1", port=self.postgres.port,
                                                   user=self.postgres.user, dbname=self.database,
                                                   application_name="chaos")  # fmt: skip
                self.connection.autocommit = True
            with self.connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM trials WHERE state = 'COMPLETE'")
                self.complete.append((time.time(), cursor.fetchone()[0]))
        except psycopg2.Error:  # restarting, or no schema yet: the next poll
            self.connection = None

    def leftovers(self) -> dict[str, int]:
        """What a clean end leaves in PostgreSQL: nothing idle in a transaction, no advisory lock."""
        import psycopg2

        where = {"host": "127.0.0.1", "port": self.postgres.port, "user": self.postgres.user}
        with contextlib.closing(psycopg2.connect(**where, dbname="postgres")) as db:
            db.autocommit = True
            with db.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'"
                )
                idle = cursor.fetchone()[0]
                cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
                return {"idle_in_transaction": idle, "advisory_locks": cursor.fetchone()[0]}


# ------------------------------------------------------------------------------------------------ the soak
def run(
    soak: Soak, faults: list[Fault], services: dict[str, Any], progress: Progress
) -> list[tuple[Fault, float]]:
    """Start the coordinator and the workers, inject the faults on time (each in a thread of its own, so
    faults overlap), until the faults are over and the study has ended (or `--drain` seconds after)."""
    soak.start_coordinator()
    for _ in range(soak.args.workers):
        soak.add_worker()
    pending, injected, threads = list(faults), [], []
    end_of_faults = soak.args.minutes * 60
    while True:
        now = time.time() - soak.start
        while pending and pending[0].at <= now:
            fault = pending.pop(0)
            injected.append((fault, time.time()))
            thread = threading.Thread(target=inject, args=(soak, fault, services), daemon=True)
            thread.start()
            threads.append(thread)
        progress.poll()
        soak.reap()
        restart_the_failed(soak)
        coordinator_done = soak.coordinator is not None and soak.coordinator.poll() is not None
        if now > end_of_faults and not pending and coordinator_done and not soak.workers:
            break
        if now > end_of_faults + soak.args.drain:
            soak.note("drain timeout: stopping what still runs")
            break
        time.sleep(0.5)
    for thread in threads:
        thread.join(timeout=30)
    return injected


def restart_the_failed(soak: Soak) -> None:
    """A cluster's restart policy (Kubernetes' OnFailure): a coordinator or worker that exited with an error
    (a database away when it started, say) is started again; one that ended well (the study done) is not."""
    coordinator = soak.coordinator
    if coordinator is not None and coordinator.poll() not in (None, 0, -signal.SIGKILL):
        soak.note(f"{coordinator.log.stem} exited {coordinator.returncode}: started again")
        soak.start_coordinator()
    for name, pid, code in soak.ended:
        if code not in (0, -signal.SIGKILL, 143) and pid not in soak.replaced:
            soak.note(f"{name} (pid {pid}) exited {code}: a new worker joins")
            soak.replaced.add(pid)
            soak.add_worker()


def lock_files(folder: Path) -> list[str]:
    """Lock files left in the processes' harness home (a stage-cache entry's `<key>.lock`: a clean end
    leaves none)."""
    return [f"lock file {path.relative_to(folder)}" for path in sorted((folder / ".harness").rglob("*.lock"))]


def stop_everything(soak: Soak) -> list[str]:
    """Processes still alive at the end (orphans: a clean end has none), stopped."""
    alive = [w for w in soak.workers if w.poll() is None]
    if soak.coordinator is not None and soak.coordinator.poll() is None:
        alive.append(soak.coordinator)
    for process in alive:
        process.send_signal(signal.SIGCONT)
        process.send_signal(signal.SIGKILL)
    return [f"{p.log.stem} (pid {p.pid})" for p in alive]


# ----------------------------------------------------------------------------------------------- the check
def check(services: dict[str, Any], injected: list[tuple[Fault, float]]) -> dict[str, Any]:
    """The history as Optuna and MLflow hold it (see the module's docstring): what is wrong, listed."""
    import optuna

    from harness.tracking.tracker import Tracker

    grid = services["grid"]
    trials = optuna.load_study(study_name="chaos.tiny", storage=services["storage"]).trials
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    dump = [{"number": t.number, "state": t.state.name, "params": t.params,
             "start": t.datetime_start.timestamp() if t.datetime_start else None,
             "end": t.datetime_complete.timestamp() if t.datetime_complete else None,
             "user_attrs": t.user_attrs, "system_attrs": t.system_attrs} for t in trials]  # fmt: skip
    (services["logs"] / "trials.json").write_text(json.dumps(dump, indent=0, default=str))  # the history
    per_point = Counter(t.params["lambda"] for t in complete)
    problems = [
        f"trial {t.number} left {t.state.name}" for t in trials if t.state.name in ("RUNNING", "WAITING")
    ]
    lost = [p for p in grid if per_point[p] == 0]
    twice = sorted(p for p, n in per_point.items() if n > 1)
    client = Tracker(services["compose"].uri).client
    experiment = client.get_experiment_by_name("chaos")
    runs = client.search_runs([experiment.experiment_id], max_results=50000)
    trial_runs = [r for r in runs if r.data.tags.get("harness.role") == "trial"]
    finished = Counter(r.data.tags.get("trial") for r in trial_runs if r.info.status == "FINISHED")
    numbers = {str(t.number) for t in complete}
    problems += [f"trial {n}: {finished[n]} FINISHED runs" for n in sorted(numbers) if finished[n] != 1]
    problems += [f"a FINISHED run of trial {n}, which is not COMPLETE" for n in finished if n not in numbers]
    problems += [f"run {r.info.run_name} left RUNNING" for r in runs if r.info.status == "RUNNING"]
    first_fault = min((at for _, at in injected), default=float("inf"))

    def accounted(run: Any) -> bool:  # ended by a fault: an error tag, and after the first fault began
        return bool(run.data.tags.get("error")) and (run.info.end_time or 0) / 1000 >= first_fault

    ended_badly = [r for r in trial_runs if r.info.status in ("KILLED", "FAILED")]
    problems += [
        f"run {r.info.run_name} {r.info.status} with no fault before it: {r.data.tags.get('error', '-')}"
        for r in ended_badly
        if not accounted(r)
    ]
    parents = [r for r in runs if r.data.tags.get("harness.role") == "study"]
    problems += [
        f"parent run {r.info.run_id} {r.info.status}" for r in parents if r.info.status != "FINISHED"
    ]
    ended = Counter(r.info.status for r in trial_runs)
    return {
        "points": len(grid),
        "complete": len(complete),
        "lost": lost,
        "twice": twice,
        "trials": dict(Counter(t.state.name for t in trials)),
        "runs": dict(ended),
        "parents": len(parents),
        "problems": problems,
        "done_at": sorted(t.datetime_complete.timestamp() for t in complete),
    }


def recovery(injected: list[tuple[Fault, float]], done_at: list[float]) -> dict[str, list[float]]:
    """Per fault kind: seconds from each fault's start to the first trial COMPLETE after it."""
    import bisect

    found: dict[str, list[float]] = defaultdict(list)
    for fault, at in injected:
        index = bisect.bisect_right(done_at, at)
        if index < len(done_at):
            found[fault.kind].append(done_at[index] - at)
    return found


def same_alone(services: dict[str, Any], folder: Path, env: dict[str, str]) -> list[str]:
    """The real points run alone (a study of those points, one thread, a sqlite store) against the soak's
    runs of them: every metric equal but the timings."""
    from harness.tracking.tracker import Tracker
    from tests.helpers import tiny_study

    if not services["real"]:
        return []
    alone = tiny_study(folder, services["bert"], {"lambda": services["real"]}, name="chaos_alone",
                       final_tasks=["quick"], max_steps=2, eval_every=1)  # fmt: skip
    uri = f"sqlite:///{folder / 'alone.db'}"
    clean = {k: v for k, v in env.items() if not k.startswith(("CHAOS_", "MLFLOW_TRACKING_"))}
    subprocess.run([sys.executable, "-m", "harness", "run-study", alone, "--tracking-uri", uri, "--storage",
                    f"sqlite:///{folder / 'alone-optuna.db'}", "--threads", "1", "--no-progress"],
                   env=clean, capture_output=True, check=True, timeout=900)  # fmt: skip

    def metrics(uri: str, name: str) -> dict[float, dict[str, float]]:
        client = Tracker(uri).client
        experiment = client.get_experiment_by_name(name)
        runs = client.search_runs(
            [experiment.experiment_id], "attributes.status = 'FINISHED'", max_results=50000
        )
        trials = [r for r in runs if r.data.tags.get("harness.role") == "trial"]
        untimed = {r.info.run_id: {k: v for k, v in r.data.metrics.items() if "seconds" not in k}
                   for r in trials}  # fmt: skip
        return {
            float(r.data.params["lambda"]): untimed[r.info.run_id]
            for r in trials
            if float(r.data.params["lambda"]) in services["real"]
        }

    soaked, solo = metrics(services["compose"].uri, "chaos"), metrics(uri, "chaos_alone")
    return [
        f"lambda {p}: {sorted(k for k in solo[p] if soaked.get(p, {}).get(k) != solo[p][k])} differ"
        for p in services["real"]
        if soaked.get(p) != solo.get(p)
    ]


def plot(progress: Progress, injected: list[tuple[Fault, float]], start: float, path: Path) -> None:
    """Trials completed per 15 s over the soak, each fault a mark at its start (by kind)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    times = [t - start for t, _ in progress.complete]
    counts = [c for _, c in progress.complete]
    bins = range(0, int(max(times, default=0)) + 15, 15)
    rate = [0.0] * len(bins)
    for before, (t1, c1) in zip(counts, zip(times[1:], counts[1:], strict=True), strict=False):
        rate[min(int(t1 // 15), len(rate) - 1)] += max(0, c1 - before) * 4  # per minute
    figure, axis = plt.subplots(figsize=(11, 4))
    axis.step(list(bins), rate, where="post", color="black", label="trials completed per minute (15 s bins)")
    kinds = sorted({f.kind for f, _ in injected})
    colours = plt.get_cmap("tab20")
    for index, kind in enumerate(kinds):
        marks = [at - start for f, at in injected if f.kind == kind]
        axis.vlines(marks, 0, max(rate, default=1) * 1.05, colors=[colours(index)], alpha=0.7, label=kind)
    axis.set_xlabel("seconds since the start")
    axis.set_ylabel("trials / min")
    axis.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def summary(result: dict[str, Any], injected: list[tuple[Fault, float]], soak: Soak, orphans: list[str],
            leftovers: dict[str, int], unequal: list[str],
            args: argparse.Namespace) -> list[str]:  # fmt: skip
    """The lines a soak prints: faults by kind, points lost and twice, recovery, the check's verdict."""
    kinds = Counter(f.kind for f, _ in injected)
    healed = recovery(injected, result["done_at"])
    real = len([v for v in soak.env["CHAOS_REAL"].split(",") if v])
    lines = [fleet_load.cpu_line(),
             f"{args.workers} workers, {args.minutes:g} min of faults (seed {args.seed}, one every "
             f"{args.every:g} s on average); trials sleep {args.sleep:g} s, {real} grid point(s) train for "
             "real",
             f"grid points {result['points']}: COMPLETE {result['complete']}, lost {len(result['lost'])}, "
             f"twice {len(result['twice'])}; Optuna trials {result['trials']}; MLflow trial runs "
             f"{result['runs']}",
             "faults injected, and recovery (fault -> the next trial COMPLETE), p50 / p95 s:"]  # fmt: skip
    for kind in KINDS:
        if kinds[kind]:
            waits = healed.get(kind, [])
            lines.append(
                f"  {kind:20s} {kinds[kind]:3d}   {percentile(waits, 0.5):6.1f} / "
                f"{percentile(waits, 0.95):6.1f}"
            )
    problems = list(result["problems"])
    problems += [f"point {p} never COMPLETE" for p in result["lost"]]
    problems += [f"point {p} COMPLETE more than once" for p in result["twice"]]
    problems += [f"orphan: {o}" for o in orphans]
    problems += [f"{n} {what} left in PostgreSQL" for what, n in leftovers.items() if n]
    problems += [f"real trial differs from the same point alone: {u}" for u in unequal]
    codes = Counter(code for _, _, code in soak.ended)
    last = soak.coordinators[-1].returncode if soak.coordinators else None
    if last != 0:
        problems.append(f"the last coordinator exited with {last}")
    coordinators = [c.returncode for c in soak.coordinators]
    lines.append(
        f"workers ended: {dict(codes)} (exit codes; -9: SIGKILLed, 143: SIGTERM); coordinators: "
        f"{coordinators}; left in PostgreSQL: {leftovers}"
    )
    lines.append("check: OK" if not problems else f"check: FAILED ({len(problems)} problem(s))")
    lines += [f"  {p}" for p in problems[:40]]
    if problems:
        lines.append("the events that led to it:")
        lines += [f"  {e.at:8.2f} s  {e.what}" for e in soak.events]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--minutes", type=float, default=5.0, help="how long faults are injected")
    parser.add_argument(
        "--seed", type=int, default=1, help="the schedule's seed: the same seed, the same faults"
    )
    parser.add_argument("--every", type=float, default=20.0, help="mean seconds between faults")
    parser.add_argument("--faults", default=",".join(KINDS), help="the kinds injected (comma list)")
    parser.add_argument("--sleep", type=float, default=4.0, help="seconds a sleeping trial takes")
    parser.add_argument("--heartbeat", type=int, default=2)
    parser.add_argument("--real", type=int, default=2, help="grid points that train the tiny BERT for real")
    parser.add_argument(
        "--drain", type=float, default=240.0, help="seconds after the faults for the study to end"
    )
    parser.add_argument("--logs", help="the processes' logs (default: in a temporary folder, kept)")
    parser.add_argument("--json", help="every figure and event as JSON")
    parser.add_argument("--plot", help="throughput over time with the faults, as PNG")
    args = parser.parse_args()
    kinds = [k for k in args.faults.split(",") if k]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        sys.exit(f"unknown fault kind(s) {unknown}; choose from {', '.join(KINDS)}")
    for name, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "MLFLOW_DISABLE_TELEMETRY": "true",
                        "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}.items():  # fmt: skip
        os.environ.setdefault(name, value)
    os.environ.setdefault("HARNESS_DATA_DIR", str(fleet_load.DATA))
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` cleans up as Ctrl-C does
    folder = Path(tempfile.mkdtemp(prefix="chaos-"))
    logs = Path(args.logs or folder / "logs")
    logs.mkdir(parents=True, exist_ok=True)
    faults = schedule(args.seed, args.minutes, args.every, kinds, args.heartbeat)
    print(
        f"{len(faults)} faults scheduled: {dict(Counter(f.kind for f in faults))}; logs in {logs}", flush=True
    )
    from harness.fleet import forked

    forked.PRELOAD.insert(len(forked.PRELOAD) - 1, "chaos_trial")  # the fork server patches the trial
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "bench")])  # for the fork server
    with contextlib.ExitStack() as cleanup:
        services = set_up(args, folder, cleanup)
        env = children_env(args, services, folder)
        os.environ.update(services["compose"].environment("coordinator"))  # this process's checks too
        services["logs"] = logs
        soak = Soak(args, env, logs, services["coordinator"], services["worker"])
        cleanup.callback(stop_everything, soak)  # an interrupted soak (Ctrl-C, SIGTERM) leaves none running
        progress = Progress(services["postgres"], services["storage"].rsplit("/", 1)[1])
        injected = run(soak, faults, services, progress)
        orphans = stop_everything(soak) + lock_files(folder)
        time.sleep(3)  # the killed processes' connections close
        result = check(services, injected)
        leftovers = progress.leftovers()
        unequal = same_alone(services, folder, env)
        lines = summary(result, injected, soak, orphans, leftovers, unequal, args)
        print("\n".join(lines))
        if args.plot:
            plot(progress, injected, soak.start, Path(args.plot))
        if args.json:
            Path(args.json).write_text(json.dumps({
                "args": vars(args), "lines": lines,
                "result": {k: v for k, v in result.items() if k != "done_at"},
                "faults": [{**asdict(f), "injected": at - soak.start} for f, at in injected],
                "recovery": recovery(injected, result["done_at"]), "events": [asdict(e) for e in soak.events],
            }, indent=1))  # fmt: skip
    sys.exit(0 if lines and any(line == "check: OK" for line in lines) else 1)


if __name__ == "__main__":
    main()
