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
from collections.abc import Iterator
from pathlib import Path

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
    """A throw-away PostgreSQL server on 127.0.0.1 (trust authentication, loopback only)."""

    def __init__(self, user: str = "harness") -> None:
        self.user = user
        self.port = free_port()
        self.bin = postgres_bin()
        # postgres refuses to run as root, and cannot enter pytest's 0700 temp folders: its own folder
        self.root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_postgres:
            shutil.chown(self.root, "postgres")

    def _run(self, *args: str) -> None:
        subprocess.run([*self.as_postgres, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> Postgres:
        assert self.bin is not None
        data = self.root / "data"
        self._run(str(self.bin / "initdb"), "-D", str(data), "-U", self.user, "--auth=trust", "-E", "UTF8")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(self.root / "log"),
            "-w",
            "start",
        )
        return self

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

        connection = psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user, dbname=database)
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
    """Compose's variable syntax, `${NAME:-default}` and `${NAME}`, from `env`."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(3) or ""
        return env.get(name) or default

    return re.sub(r"\$\{(\w+)(:-([^}]*))?\}", one, value)


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
    """A background process, its output in `log`; terminated (then killed) on exit."""
    with open(log, "wb") as out:
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
