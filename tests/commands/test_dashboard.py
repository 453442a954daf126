"""Issue 59: `harness dashboard` with a password. optuna-dashboard has no authentication of its own; with
HARNESS_DASHBOARD_PASSWORD every request needs the account (HTTP basic authentication, 401 otherwise),
and off 127.0.0.1 the command refuses to start without one."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import optuna
import pytest

from harness.commands.dashboard import PASSWORD, USERNAME, BasicAuth, account, is_loopback
from harness.errors import HarnessError
from harness.study.optuna_study import open_storage
from tests.helpers import harness_here
from tests.services import free_port, process

SECRET = "dashboard-secret-7c3e"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _call(app: BasicAuth, header: str | None) -> tuple[str, dict[str, str], bytes, dict[str, Any]]:
    """The status, headers and body `app` answers a GET with this Authorization header, and the environ the
    wrapped app saw (empty when it was not called)."""
    answer: dict[str, Any] = {}
    seen: dict[str, Any] = {}

    def inner(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        seen.update(environ)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"studies"]

    app.app = inner
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/studies"}
    if header is not None:
        environ["HTTP_AUTHORIZATION"] = header

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer.update(status=status, headers=dict(headers))

    body = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], body, seen


@pytest.mark.parametrize(
    "header",
    [
        None,
        _basic("admin", "wrong"),
        _basic("someone", SECRET),
        _basic("admin", SECRET + "x"),
        _basic("admin", ""),
        "Basic " + base64.b64encode(SECRET.encode()).decode(),  # no colon: no user
        "Basic !!!not-base64!!!",
        f"Bearer {SECRET}",
        "",
    ],
)
def test_the_middleware_answers_401_to_anything_but_the_account(header: str | None) -> None:
    status, headers, body, seen = _call(BasicAuth(lambda e, s: [], "admin", SECRET), header)
    assert status == "401 Unauthorized" and not seen  # the dashboard itself never ran
    assert headers["WWW-Authenticate"] == 'Basic realm="optuna-dashboard", charset="UTF-8"'
    assert SECRET.encode() not in body


def test_the_middleware_passes_the_account_through() -> None:
    status, _, body, seen = _call(BasicAuth(lambda e, s: [], "admin", SECRET), _basic("admin", SECRET))
    assert (status, body, seen["REMOTE_USER"]) == ("200 OK", b"studies", "admin")
    with pytest.raises(ValueError):
        BasicAuth(lambda e, s: [], "admin", "")  # an empty password would be no password


def test_the_account_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORD, raising=False)
    monkeypatch.delenv(USERNAME, raising=False)
    assert account("127.0.0.1") is None and account("localhost") is None and account("::1") is None
    for host in ("0.0.0.0", "::", "10.1.2.3", "dashboard.example.org"):
        assert not is_loopback(host)
        with pytest.raises(HarnessError, match=f"set {PASSWORD} .* to serve it on "):
            account(host)
    monkeypatch.setenv(PASSWORD, "")  # set but empty: no password
    with pytest.raises(HarnessError):
        account("0.0.0.0")
    monkeypatch.setenv(PASSWORD, SECRET)
    assert account("0.0.0.0") == account("127.0.0.1") == ("admin", SECRET)
    monkeypatch.setenv(USERNAME, "viewer")
    assert account("0.0.0.0") == ("viewer", SECRET)


def test_the_command_refuses_other_hosts_without_a_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One line naming the variable, exit 2, before the storage is opened or the port bound."""
    monkeypatch.delenv(PASSWORD, raising=False)
    storage = tmp_path / "optuna.journal"
    optuna.create_study(study_name="hidden.tiny", storage=open_storage(str(storage)))
    port = str(free_port())
    result = harness_here("dashboard", "--storage", str(storage), "--host", "0.0.0.0", "--port", port)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: optuna-dashboard has no authentication of its own: set {PASSWORD} (user {USERNAME}, default "
        "admin) to serve it on 0.0.0.0, or keep --host 127.0.0.1"
    ]
    assert result.stdout == ""
    with socket.socket() as probe:  # nothing listens there
        assert probe.connect_ex(("127.0.0.1", int(port))) != 0


def _status(url: str, header: str | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Authorization": header} if header else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _wait_for_any_answer(url: str, proc: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the dashboard exited with {proc.returncode}")
        with contextlib.suppress(urllib.error.URLError, ConnectionError):
            _status(url)
            return
        time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@pytest.mark.slow
def test_the_dashboard_with_a_password_answers_only_its_account(tmp_path: Path) -> None:
    """`harness dashboard` on 127.0.0.1 over a real journal storage with HARNESS_DASHBOARD_PASSWORD: 401
    without credentials, with a wrong password or user; 200 and the study with the account."""
    storage = tmp_path / "optuna.journal"
    optuna.create_study(study_name="shown.tiny", storage=open_storage(str(storage)))
    port = free_port()
    api = f"http://127.0.0.1:{port}/api/studies"
    args = [sys.executable, "-m", "harness", "dashboard", "--storage", str(storage), "--port", str(port)]
    with process(args, tmp_path / "dashboard.log", {PASSWORD: SECRET}) as dashboard:
        _wait_for_any_answer(api, dashboard)
        anonymous = _status(api)
        wrong_password = _status(api, _basic("admin", "not-the-password"))
        wrong_user = _status(api, _basic("root", SECRET))
        page = _status(f"http://127.0.0.1:{port}/dashboard")
        right = _status(api, _basic("admin", SECRET))
    assert anonymous[0] == wrong_password[0] == wrong_user[0] == page[0] == 401
    assert anonymous[1]["WWW-Authenticate"].startswith('Basic realm="optuna-dashboard"')
    assert b"shown.tiny" not in anonymous[2] + wrong_password[2] + page[2]
    assert right[0] == 200
    assert [s["study_name"] for s in json.loads(right[2])["study_summaries"]] == ["shown.tiny"]
    log = (tmp_path / "dashboard.log").read_text()
    assert "user admin and its password" in log and SECRET not in log
