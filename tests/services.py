"""Real servers for the scale-out tests, started on 127.0.0.1: PostgreSQL 15 (initdb / pg_ctl) and the
processes of docker-compose.yml (its own commands, service names mapped to 127.0.0.1)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.launcher import harness_command, launch

REPO = Path(__file__).resolve().parents[1]


def postgres_bin() -> Path | None:
    """The directory of initdb / pg_ctl: on PATH, else Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


def postgres_missing() -> str | None:
    """Why a PostgreSQL server cannot be started here, or None."""
    if postgres_bin() is None:
        return (
            "PostgreSQL server binaries (initdb, pg_ctl) not found; `make test` installs postgresql-15 "
            "where apt-get runs as root"
        )
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "root, and no `postgres` user to run the server as (Debian's postgresql package adds it)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Postgres:
    """A throw-away PostgreSQL server on 127.0.0.1, loopback only: trust authentication, or with `password`
    scram-sha-256 (every connection needs it, as a real server's)."""

    def __init__(self, user: str = "harness", password: str = "") -> None:
        self.user = user
        self.password = password
        self.port = free_port()
        self.max_connections = 200  # the tests'; PostgreSQL's own (and the postgres:15 image's): 100
        self.bin = postgres_bin()
        # postgres refuses to run as root, and cannot enter pytest's 0700 temp folders: its own folder
        self.root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.root, "postgres")

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_postgres, *args], check=True, capture_output=True, timeout=120)

    def start(self, max_connections: int | None = None) -> Postgres:
        """initdb and start; `max_connections` (default 200) stays for every later start (`restart`)."""
        assert self.bin is not None
        self.max_connections = max_connections or self.max_connections
        data = self.root / "data"
        auth = ["--auth=trust"]
        if self.password:
            secret = self.root / "password"
            secret.write_text(self.password)
            if self.as_postgres:
                shutil.chown(secret, "postgres")
            auth = ["--auth=scram-sha-256", f"--pwfile={secret}"]
        self._run(str(self.bin / "initdb"), "-D", str(data), "-U", self.user, *auth, "-E", "UTF8")
        self.start_server()
        return self

    def start_server(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c max_connections={self.max_connections}"
        data, log = str(self.root / "data"), str(self.root / "log")
        self._run(str(self.bin / "pg_ctl"), "-D", data, "-o", options, "-l", log, "-w", "start")

    def stop_server(self) -> None:
        """`pg_ctl stop -m fast`, as `pg_ctl restart -m fast` begins: sessions are ended at once."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")

    def restart(self, down_for: float = 0.0) -> float:
        """Stop the server, keep it down `down_for` seconds, start it; returns the seconds it was away."""
        started = time.monotonic()
        self.stop_server()
        time.sleep(down_for)
        self.start_server()
        return time.monotonic() - started

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str, password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"postgresql+psycopg2://{self.user}{secret}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run SQL statements (one per `;`), each outside a transaction (CREATE DATABASE needs that)."""
        import psycopg2

        connection = psycopg2.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname=database, password=self.password or None
        )
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                for statement in (s.strip() for s in _without_comments(sql).split(";")):
                    if statement:
                        cursor.execute(statement)
        finally:
            connection.close()


def _without_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.strip().startswith("--"))


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's variable syntax, `${NAME:-default}`, `${NAME:?error}` and `${NAME}`, from `env`."""

    def one(match: re.Match[str]) -> str:
        name, kind, text = match.group(1), match.group(2), match.group(3) or ""
        if kind == ":?" and not env.get(name):
            raise KeyError(f"compose needs {name}: {text}")
        return env.get(name) or (text if kind == ":-" else "")

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", one, value)


def local_command(
    command: list[str], env: dict[str, str], hosts: dict[str, str], exact: dict[str, str]
) -> list[str]:
    """A compose service's command as a local process: variables filled in, the service names and ports
    of the compose network replaced by their 127.0.0.1 addresses (`hosts`, within each argument; `exact`,
    whole arguments such as a port or a container path), and this environment's entry points."""
    out = []
    for part in command:
        text = interpolate(str(part), env)
        for name, address in hosts.items():
            text = text.replace(name, address)
        out.append(exact.get(text, text))
    programs = {"harness": [sys.executable, "-m", "harness"], "mlflow": [sys.executable, "-m", "mlflow"]}
    programs["optuna-dashboard"] = [str(Path(sys.executable).parent / "optuna-dashboard")]
    return programs.get(out[0], [out[0]]) + out[1:]


def wait_for_http(url: str, timeout: float = 120.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args[:3]} exited with {proc.returncode} before {url} answered")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as answer:
            if answer.status == 200:
                return
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@contextlib.contextmanager
def process(command: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """A background process in a session of its own, its output in `log`; terminated (then killed) on
    exit. A `python -m harness` command is launched from the preloaded fork server (tests/launcher.py)."""
    with open(log, "wb") as out:
        args = harness_command(command)
        if args is not None:
            proc = launch(args, log, env)
        else:
            proc = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        try:
            yield proc
        finally:  # the whole process group: mlflow server's own workers too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


# what the compose file asks of its user (`${NAME:?...}`), for the tests' own servers
SECRETS = {
    "MLFLOW_ADMIN_PASSWORD": "test-admin-password-8f2c",
    "MLFLOW_SECRET_KEY": "test-secret-key-1d9e",
    "DASHBOARD_PASSWORD": "test-dashboard-password-5b07",
}


class Compose:
    """docker-compose.yml's services as local processes on 127.0.0.1: its commands with the service names
    mapped to local addresses, and its MLflow server (one process, on `postgres`), which can be restarted
    on the same port."""

    def __init__(self, services: dict, postgres: Postgres, state: Path, env: dict[str, str]) -> None:
        self.services = services
        self.env = {**SECRETS, "POSTGRES_PASSWORD": postgres.password or "trusted", **env}
        self.port = free_port()
        self.uri = f"http://127.0.0.1:{self.port}"
        self.hosts = {
            "@postgres:5432": f"@127.0.0.1:{postgres.port}",
            "mlflow:5000": f"127.0.0.1:{self.port}",
            "localhost:5000": f"localhost:{self.port}",
            "127.0.0.1:5000": f"127.0.0.1:{self.port}",
            "0.0.0.0": "127.0.0.1",
        }
        self.exact = {"5000": str(self.port), "/state/mlartifacts": str(state / "mlartifacts")}
        self.logs = state / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self._mlflow: contextlib.ExitStack | None = None
        for volume in services["mlflow"].get("volumes", []):  # its configuration files, hosts mapped
            source, target = volume.split(":")[:2]
            if (REPO / source).is_file():
                local = state / Path(source).name
                local.write_text(self._mapped((REPO / source).read_text()))
                self.exact[target] = str(local)

    def _mapped(self, text: str) -> str:
        for name, address in self.hosts.items():
            text = text.replace(name, address)
        return text

    def environment(self, service: str) -> dict[str, str]:
        """The service's credentials and MLflow settings from the compose file, as a local process gets
        them (container paths and hosts mapped; not its container-only HARNESS_DATA_DIR and HF_HOME)."""
        given = self.services[service].get("environment", {})
        wanted = {k: interpolate(str(v), self.env) for k, v in given.items()}
        return {k: self.exact.get(v, v) for k, v in wanted.items() if k.startswith(("MLFLOW", "PG"))}

    def command(self, service: str, **env: str) -> list[str]:
        local = local_command(self.services[service]["command"], {**self.env, **env}, self.hosts, self.exact)
        return [*local, "--workers", "1"] if service == "mlflow" else local  # one server process is enough

    def start_mlflow(self) -> None:
        self._mlflow = contextlib.ExitStack()
        env = self.environment("mlflow")
        server = self._mlflow.enter_context(process(self.command("mlflow"), self.logs / "mlflow.log", env))
        wait_for_http(f"{self.uri}/health", proc=server)

    def stop_mlflow(self) -> None:
        if self._mlflow is not None:
            self._mlflow.close()
            self._mlflow = None

    def restart_mlflow(
        self, on_failed_start: Callable[[str], None] | None = None, give_up: float = 300
    ) -> float:
        """Stop the server and start a new one on the same port; returns the seconds it was away. A server
        that exits at its start (MLflow exits 1 when its database is restarting) is started again after
        1, 2, 4, ... 15 s, as compose's `restart: on-failure` does, `on_failed_start` told why."""
        started, delay = time.monotonic(), 1.0
        self.stop_mlflow()
        while True:
            try:
                self.start_mlflow()
                return time.monotonic() - started
            except RuntimeError as exc:
                self.stop_mlflow()
                if time.monotonic() - started > give_up:
                    raise
                if on_failed_start is not None:
                    lines = (self.logs / "mlflow.log").read_text(errors="replace").strip().splitlines()
                    on_failed_start(f"{exc}; its log ends: {lines[-1] if lines else '(empty)'}")
                time.sleep(delay)
                delay = min(2 * delay, 15.0)
