"""Credentials: where the harness takes them from, and the one line it says when they are missing, wrong or
visible to others.

- **PostgreSQL** (the Optuna storage, an MLflow store): the URL names host, port, user and database; the
  password comes from PostgreSQL's own PGPASSWORD or a password file (~/.pgpass, or PGPASSFILE), which the
  driver (libpq) reads when the URL has none. `--storage` defaults to HARNESS_STORAGE, so even a URL with
  its password can stay off the command line.
- **An MLflow server with authentication** (`mlflow server --app-name basic-auth`, as docker-compose.yml
  starts it): MLflow's client sends MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD (or a bearer
  MLFLOW_TRACKING_TOKEN) with each request.
- **optuna-dashboard** (`harness dashboard`): HARNESS_DASHBOARD_PASSWORD (user HARNESS_DASHBOARD_USERNAME,
  default admin) is the account every request needs; required off 127.0.0.1 (harness.commands.dashboard).

A password inside `--storage` or `--tracking-uri` on the command line is shown by `ps` to every user of
the machine: the command says so in one warning line. URLs in messages are masked (errors.mask_password).
A server that refuses the credentials (401) or the account (403) ends the command in one line naming what
to set, exit 2.
"""

from __future__ import annotations

import base64
import os
import re

from harness.errors import HarnessError

USERNAME, PASSWORD, TOKEN = "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN"
ELSEWHERE = {
    "--storage": "PGPASSWORD or ~/.pgpass (PGPASSFILE) and leave it out of the URL, or give the whole URL in "
    "HARNESS_STORAGE",
    "--tracking-uri": "MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD for an MLflow server, PGPASSWORD "
    "for a database, or give the URI in MLFLOW_TRACKING_URI",
}


class CredentialsRefused(HarnessError):
    """A server refused this process's credentials: not waited for or retried (they will not change)."""


def password_in(url: str) -> bool:
    """Whether a URL carries a password (`scheme://user:password@host`)."""
    return re.search(r"://[^:/@]+:[^@]*@", url) is not None


def visible_password_warning(option: str) -> str:
    """The warning for a password given inside `option` on the command line."""
    return (
        f"warning: the password inside {option} is shown by `ps` to every user of this machine; put it in "
        f"{ELSEWHERE[option]}"
    )


def authorization_header() -> dict[str, str]:
    """The Authorization header MLflow's client sends from the environment (none when unset)."""
    if os.environ.get(TOKEN):
        return {"Authorization": f"Bearer {os.environ[TOKEN]}"}
    user, password = os.environ.get(USERNAME), os.environ.get(PASSWORD)
    if user is None and password is None:
        return {}
    pair = base64.b64encode(f"{user or ''}:{password or ''}".encode()).decode()
    return {"Authorization": f"Basic {pair}"}


def refused(server: str | None, status: int) -> CredentialsRefused:
    """The one line for a 401 (no or wrong credentials) or 403 (an account without the permission) from
    `server` (a masked URL; None: the tracking server of the command)."""
    server = f"MLflow server {server}" if server else "the MLflow tracking server"
    user = os.environ.get(USERNAME)
    if status == 403:
        return CredentialsRefused(
            f"{server} refused account {user!r} the permission to do this (403); ask the "
            "server's admin for EDIT permission on the experiment, or use another account"
        )
    if os.environ.get(TOKEN) or user or os.environ.get(PASSWORD):
        given = f"the token in {TOKEN}" if os.environ.get(TOKEN) else f"{USERNAME}={user!r} and its password"
        return CredentialsRefused(
            f"{server} refused {given} (401); set {USERNAME} and {PASSWORD} to an account of that server"
        )
    return CredentialsRefused(
        f"{server} needs credentials (401) and none were given; set {USERNAME} and "
        f"{PASSWORD} to an account of that server"
    )


def refused_by_mlflow(exc: BaseException) -> CredentialsRefused | None:
    """The one line for an MLflow client error that is a 401 or 403 answer, else None."""
    code = getattr(exc, "error_code", "")
    if type(exc).__name__ != "MlflowException" or code not in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return None
    return refused(None, 401 if code == "UNAUTHENTICATED" else 403)
