"""Where a run's state goes (the MLflow tracking URI), checked without importing MLflow, so a command
refuses a bad place in one line and at once."""

from __future__ import annotations

import os
from pathlib import Path

from harness.credentials import authorization_header, refused
from harness.errors import HarnessError, mask_password, writable_dir
from harness.home import harness_home, missing_store

TRACKING_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql", "file", "http", "https", "databricks")


def resolve_tracking_uri(explicit: str | None = None, create: bool = True) -> str:
    """--tracking-uri, else MLFLOW_TRACKING_URI, else sqlite:///.harness/mlflow.db (its folder made unless
    `create` is False: a command that only reads); a URI of a scheme MLflow cannot store runs in is
    refused in one line."""
    given = explicit or os.environ.get("MLFLOW_TRACKING_URI")
    if given:
        scheme = given.split("://", 1)[0].split("+", 1)[0] if "://" in given else "file"
        scheme = SCHEME_ALIASES.get(scheme, scheme)
        if scheme not in TRACKING_SCHEMES:
            raise HarnessError(
                f"tracking URI {mask_password(given)!r}: MLflow cannot use scheme {scheme!r}; give "
                "sqlite:///path.db, postgresql://..., a file path, or http(s)://host:port of an MLflow server"
            )
        if scheme == "file":
            return _from_path(given)
        try:
            return with_driver(given)
        except HarnessError as exc:
            raise HarnessError(f"tracking URI {mask_password(given)!r}: {exc}") from None
    home = harness_home()
    if create:
        writable_dir(home, "the harness home", "set HARNESS_HOME to a writable directory")
    return f"sqlite:///{home / 'mlflow.db'}"


# the drivers SQLAlchemy knows for a database, the one it loads for the bare scheme first:
# `dialect+driver` -> (module to import, pip package)
DATABASE_DRIVERS = {
    "postgresql": {"postgresql+psycopg": ("psycopg", "'psycopg[binary]'"),
                   "postgresql+psycopg2": ("psycopg2", "psycopg2-binary")},
    "mysql": {"mysql+mysqldb": ("MySQLdb", "mysqlclient"), "mysql+pymysql": ("pymysql", "pymysql")},
}  # fmt: skip
SCHEME_ALIASES = {"postgres": "postgresql"}  # libpq's and Heroku's spelling, which SQLAlchemy refuses
SUGGESTED = {"postgresql": "postgresql+psycopg2", "mysql": "mysql+pymysql"}  # the `scale` extra's; pure


def with_driver(url: str) -> str:
    """`url` as SQLAlchemy (Optuna's RDB storage, MLflow's store) can open it with the drivers installed:
    SQLAlchemy 2.1 loads psycopg (3) for a bare `postgresql://` and mysqlclient for `mysql://`, so where
    only the other driver is installed the URL names that one; `postgres://` is `postgresql://`. A driver
    missing for the URL is one line naming its pip package. Other URLs are returned as given."""
    from importlib.util import find_spec

    scheme, sep, rest = url.partition("://")
    dialect, _, driver = scheme.partition("+")
    dialect = SCHEME_ALIASES.get(dialect, dialect)
    drivers = DATABASE_DRIVERS.get(dialect)
    if not sep or drivers is None:
        return url
    if driver:
        named = f"{dialect}+{driver}"
        if named in drivers and find_spec(drivers[named][0]) is None:
            raise HarnessError(f"no database driver for {scheme!r}; pip install {drivers[named][1]}")
        return f"{named}://{rest}"
    installed = [name for name, (module, _) in drivers.items() if find_spec(module) is not None]
    if not installed:
        others = ", ".join(package for name, (_, package) in drivers.items() if name != SUGGESTED[dialect])
        suggested = drivers[SUGGESTED[dialect]][1]
        raise HarnessError(f"no database driver for {scheme!r}; pip install {suggested} (or {others})")
    return f"{dialect}://{rest}" if next(iter(drivers)) in installed else f"{installed[0]}://{rest}"


def _from_path(given: str) -> str:
    """A plain path or file:// URI: `x.db` is the sqlite store it names; a folder would be MLflow's file
    store, which MLflow 3 refuses for new stores (a traceback) unless MLFLOW_ALLOW_FILE_STORE is set."""
    path = Path(given.removeprefix("file://")).expanduser().resolve()
    if path.suffix in (".db", ".sqlite", ".sqlite3"):
        return f"sqlite:///{path}"
    if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() in ("1", "true"):
        return given
    raise HarnessError(
        f"tracking URI {given!r} is a folder: MLflow's file store takes no new stores since MLflow 3; "
        f"give sqlite:///{path / 'mlflow.db'} (or set MLFLOW_ALLOW_FILE_STORE=true to use the folder)"
    )


def check_reachable(uri: str, timeout: float = 5.0) -> None:
    """Fail in one line, before anything is written, when the tracking store cannot be used: an MLflow
    server that does not answer its /health endpoint, or a sqlite file in a directory we cannot write."""
    shown = mask_password(uri)
    if uri.startswith(("http://", "https://")):
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(f"{uri.rstrip('/')}/health", timeout=timeout) as answer:
                answer.read()
        except urllib.error.HTTPError as exc:
            raise HarnessError(
                f"MLflow server {shown} answered {exc.code} {exc.reason} to /health; check the URL "
                "(and the server's --allowed-hosts)"
            ) from None
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise HarnessError(
                f"MLflow server {shown} is not reachable ({reason}); start it (`mlflow server --host "
                f"127.0.0.1 --port {_port(uri)}`) or give another --tracking-uri"
            ) from None
        check_credentials(uri, timeout)
    elif uri.startswith("sqlite:///"):
        writable_dir(
            Path(uri.removeprefix("sqlite:///")).parent, "the MLflow store", "give a writable --tracking-uri"
        )


def require_store(explicit: str | None) -> str:
    """The tracking URI (as resolve_tracking_uri) for reading only: a sqlite store that does not exist yet
    is an error, not a new empty file (nor a new .harness folder)."""
    uri = resolve_tracking_uri(explicit, create=False)
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///")).is_file():
        raise HarnessError(
            f"{missing_store(Path(uri.removeprefix('sqlite:///')))}; run a study first, run this where one "
            "ran (or in a folder below), or give --tracking-uri"
        )
    return uri


def default_storage() -> str:
    """The local Optuna journal: .harness/optuna.journal."""
    return str(harness_home() / "optuna.journal")


def check_journal(spec: str, create: bool = True) -> Path:
    """A journal file path the Optuna storage can use: its folder writable, not a directory; a worker
    (`create=False`) needs the file to exist already."""
    path = Path(spec)
    if not create and not path.is_file():
        raise HarnessError(
            f"{missing_store(path, 'Optuna journal')}; start the study with `harness run-study` first"
        )
    writable_dir(path.parent, "the Optuna storage", "give --storage a writable path or an RDB URL")
    if path.is_dir():
        raise HarnessError(f"Optuna storage {path} is a directory; give --storage a file path")
    return path


def check_port_free(host: str, port: int, server: str) -> None:
    """One line, before a server is started, when `host:port` is taken (an earlier server still running):
    the server would otherwise only log "Address already in use" while the old one keeps answering."""
    import socket

    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise HarnessError(
                f"cannot start {server} on {host}:{port}: {exc.strerror} (an earlier server still running?); "
                "stop it or give another --port"
            ) from None


def check_credentials(uri: str, timeout: float = 5.0) -> None:
    """One request that needs an account (/health does not): a server with authentication that refuses
    this process's MLFLOW_TRACKING_* credentials (401) or account (403) ends the command in one line."""
    import urllib.error
    import urllib.request

    probe = urllib.request.Request(
        f"{uri.rstrip('/')}/api/2.0/mlflow/experiments/search?max_results=1", headers=authorization_header()
    )
    try:
        with urllib.request.urlopen(probe, timeout=timeout) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise refused(mask_password(uri), exc.code) from None
    except OSError:
        pass  # it answered /health a moment ago; the command's own requests say what is wrong


def _port(uri: str) -> int:
    """The port a server at `uri` listens on (the URL's, else its scheme's)."""
    from urllib.parse import urlparse

    parsed = urlparse(uri)
    return parsed.port or (443 if parsed.scheme == "https" else 80)
