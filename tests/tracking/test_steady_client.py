"""harness.tracking.steady_client: a tracking server whose database is busy answers 400 "QueuePool limit
... reached" (bench/chaos.py's 64-worker soak: 16 trials failed on it and their points were lost). A real
MLflow server behind a loopback proxy that gives the first answers of a kind that busy server's answer:
the harness's write is made again and lands once; past the retry window it is an outage, not an error."""

from __future__ import annotations

import contextlib
import http.server
import json
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from mlflow.entities import Metric

from harness.tracking.tracker import Tracker, tracking_outage
from tests.services import free_port, process, wait_for_http

# what MLflow 3.17's server answered in the soak when its pool was exhausted
BUSY = {"error_code": "BAD_REQUEST", "message": "QueuePool limit of size 2 overflow 8 reached, connection "
        "timed out, timeout 30.00 (Background on this error at: https://sqlalche.me/e/21/3o7r)"}  # fmt: skip


class BusyProxy(http.server.ThreadingHTTPServer):
    """Forwards every request to `target`, but answers the first `busy` log-batch requests as a server
    whose database pool is exhausted."""

    def __init__(self, target: str, busy: int) -> None:
        self.target, self.busy, self.batches = target, busy, 0
        super().__init__(("127.0.0.1", 0), Forward)


class Forward(http.server.BaseHTTPRequestHandler):
    server: BusyProxy

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.forward()

    def do_POST(self) -> None:  # noqa: N802
        self.forward()

    def forward(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        if self.path.endswith("/runs/log-batch"):
            self.server.batches += 1
            if self.server.batches <= self.server.busy:
                return self.answer(400, json.dumps(BUSY).encode())
        request = urllib.request.Request(self.server.target + self.path, body, method=self.command,
                                         headers={"Content-Type": "application/json"})  # fmt: skip
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


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("mlflow")
    port = free_port()
    command = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri",
               f"sqlite:///{folder / 'm.db'}", "--default-artifact-root", str(folder / "artifacts"),
               "--host", "127.0.0.1", "--port", str(port), "--workers", "1"]  # fmt: skip
    env = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with process(command, folder / "server.log", env) as server:
        wait_for_http(f"http://127.0.0.1:{port}/health", proc=server)
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def busy_proxy(target: str, busy: int) -> Iterator[BusyProxy]:
    proxy = BusyProxy(target, busy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_a_write_answered_busy_is_made_again_and_lands_once(mlflow_server: str) -> None:
    with busy_proxy(mlflow_server, busy=2) as proxy:
        tracker = Tracker(f"http://127.0.0.1:{proxy.server_address[1]}")
        run_id = tracker.client.create_run(tracker.experiment_id("busy")).info.run_id
        tracker.client.log_batch(run_id, metrics=[Metric("dev_score", 0.5, 0, 0)])
    assert proxy.batches == 3  # two busy answers, then the write
    history = Tracker(mlflow_server).client.get_metric_history(run_id, "dev_score")
    assert [(m.value, m.step) for m in history] == [(0.5, 0)]


def test_a_database_busy_past_the_window_is_an_outage_not_an_error(
    mlflow_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_TRACKING_RETRY_SECONDS", "1")
    with busy_proxy(mlflow_server, busy=100) as proxy:
        tracker = Tracker(f"http://127.0.0.1:{proxy.server_address[1]}")
        run_id = tracker.client.create_run(tracker.experiment_id("busier")).info.run_id
        with pytest.raises(Exception) as raised:
            tracker.client.log_batch(run_id, metrics=[Metric("dev_score", 0.5, 0, 0)])
    assert 1 < proxy.batches < 5  # made again within the window, then given up
    outage = tracking_outage(raised.value)
    assert outage is not None and "QueuePool limit" in str(outage)


def test_other_errors_are_not_made_again(mlflow_server: str) -> None:
    tracker = Tracker(mlflow_server)
    with pytest.raises(Exception, match="RESOURCE_DOES_NOT_EXIST|not found"):
        tracker.client.get_run("0" * 32)
