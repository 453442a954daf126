"""A real MLflow server, and a loopback proxy in front of it that answers the first requests of one kind as
a tracking server whose database pool is exhausted does (bench/chaos.py's 64-worker soak): for the tests
of harness.tracking.steady_client and harness.fleet.trial_ending."""

from __future__ import annotations

import contextlib
import http.server
import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.services import free_port, process, wait_for_http

# what MLflow 3.17's server answered in the soak when its pool was exhausted
BUSY = {"error_code": "BAD_REQUEST", "message": "QueuePool limit of size 2 overflow 8 reached, connection "
        "timed out, timeout 30.00 (Background on this error at: https://sqlalche.me/e/21/3o7r)"}  # fmt: skip


class BusyProxy(http.server.ThreadingHTTPServer):
    """Forwards every request to `target`, but answers the first `busy` requests whose path ends with
    `path` as a server whose database pool is exhausted; `calls` counts those requests."""

    def __init__(self, target: str, busy: int, path: str) -> None:
        self.target, self.busy, self.path, self.calls = target, busy, path, 0
        super().__init__(("127.0.0.1", 0), Forward)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Forward(http.server.BaseHTTPRequestHandler):
    server: BusyProxy

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.forward()

    def do_POST(self) -> None:  # noqa: N802
        self.forward()

    def do_PUT(self) -> None:  # noqa: N802
        self.forward()

    def forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        if self.path.split("?")[0].endswith(self.server.path):
            self.server.calls += 1
            if self.server.calls <= self.server.busy:
                return self.answer(400, json.dumps(BUSY).encode())
        kind = self.headers.get("Content-Type") or "application/json"
        request = urllib.request.Request(self.server.target + self.path, body, method=self.command,
                                         headers={"Content-Type": kind})  # fmt: skip
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                self.answer(reply.status, reply.read())
        except urllib.error.HTTPError as refused:
            self.answer(refused.code, refused.read())

    def answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@contextlib.contextmanager
def mlflow_server(folder: Path) -> Iterator[str]:
    """An `mlflow server` on a sqlite store in `folder`, on a free loopback port; its URI."""
    port = free_port()
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
               f"sqlite:///{folder / 'm.db'}", "--default-artifact-root", str(folder / "artifacts"),
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]  # fmt: skip
    env = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with process(command, folder / "server.log", env) as server:
        wait_for_http(f"http://127.0.0.1:{port}/health", proc=server)
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def busy_proxy(target: str, busy: int, path: str = "/runs/log-batch") -> Iterator[BusyProxy]:
    """A BusyProxy in front of `target`, serving on a loopback port while the block runs."""
    proxy = BusyProxy(target, busy, path)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
