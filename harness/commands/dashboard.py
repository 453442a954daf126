"""`harness dashboard`: optuna-dashboard over the study storage, behind HTTP basic authentication when
it is given a password.

optuna-dashboard has no authentication of its own: anyone who reaches its port reads every study and can
change trials' notes. On 127.0.0.1 (the default) only this machine's users reach it, and a password is
optional; on any other address (`--host 0.0.0.0`, as docker-compose.yml and deploy/kubernetes run it) the
command refuses to start without HARNESS_DASHBOARD_PASSWORD. With a password every request needs the
account (HARNESS_DASHBOARD_USERNAME, default `admin`) or gets 401; both are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import ipaddress
import os
from collections.abc import Callable, Iterable
from typing import Any

from harness.errors import HarnessError

USERNAME, PASSWORD = "HARNESS_DASHBOARD_USERNAME", "HARNESS_DASHBOARD_PASSWORD"
DEFAULT_USERNAME = "admin"
REALM = "optuna-dashboard"

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


class BasicAuth:
    """WSGI middleware: the wrapped app answers only requests carrying `username` and `password` in an
    `Authorization: Basic` header; every other request gets 401 with a WWW-Authenticate challenge."""

    def __init__(self, app: WSGIApp, username: str, password: str, realm: str = REALM) -> None:
        if not password:
            raise ValueError("BasicAuth needs a password")
        self.app = app
        self.username = username.encode()
        self.password = password.encode()
        self.realm = realm

    def allows(self, header: str) -> bool:
        """Whether an Authorization header value names this account (user and password both checked, in
        constant time for a given length, whichever is wrong)."""
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            pair = base64.b64decode(token.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        user, colon, password = pair.partition(b":")
        user_ok = hmac.compare_digest(user, self.username)
        password_ok = hmac.compare_digest(password, self.password)
        return bool(colon) and user_ok and password_ok

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self.allows(environ.get("HTTP_AUTHORIZATION", "")):
            environ["REMOTE_USER"] = self.username.decode()
            return self.app(environ, start_response)
        body = b"401 Unauthorized: this optuna-dashboard needs its account (HTTP basic authentication)\n"
        start_response(
            "401 Unauthorized",
            [
                ("WWW-Authenticate", f'Basic realm="{self.realm}", charset="UTF-8"'),
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Content-Length", str(len(body))),
            ],
        )
        return [body]


def is_loopback(host: str) -> bool:
    """Whether `host` is an address only this machine reaches (127.0.0.0/8, ::1, `localhost`)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to any interface
        return False


def account(host: str) -> tuple[str, str] | None:
    """The dashboard's account from the environment, or None (no password: loopback only). On any other
    host a missing password is one line naming the variable."""
    password = os.environ.get(PASSWORD, "")
    if not password:
        if not is_loopback(host):
            raise HarnessError(
                f"optuna-dashboard has no authentication of its own: set {PASSWORD} (user {USERNAME}, "
                f"default {DEFAULT_USERNAME}) to serve it on {host}, or keep --host 127.0.0.1"
            )
        return None
    return os.environ.get(USERNAME) or DEFAULT_USERNAME, password


def dashboard_app(storage: Any, credentials: tuple[str, str] | None) -> WSGIApp:
    """optuna-dashboard's WSGI app on an opened Optuna storage, behind BasicAuth with `credentials`."""
    from optuna_dashboard import wsgi

    app: WSGIApp = wsgi(storage)
    return app if credentials is None else BasicAuth(app, *credentials)


def serve(app: WSGIApp, host: str, port: int) -> None:
    """Serve `app` on host:port until interrupted (wsgiref, as optuna-dashboard's own run_server)."""
    import socket
    from wsgiref.simple_server import WSGIServer, make_server

    class Server(WSGIServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

    with make_server(host, port, app, server_class=Server) as server, contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
