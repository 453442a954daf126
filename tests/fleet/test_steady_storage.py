"""harness.fleet.steady_storage.Retry: connection errors retried within the window with one warning line per
outage (several threads included), other errors at once, and after the window one line and no more waits.
The outages themselves, on a real PostgreSQL, are in tests/fleet/test_faults.py."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy.exc import OperationalError, ProgrammingError

from harness.fleet.steady_storage import DatabaseUnavailable, Retry

REFUSED = OperationalError("SELECT 1", {}, Exception("connection refused"))


def failing(times: int, error: Exception = REFUSED) -> object:
    calls = []

    def call() -> str:
        calls.append(time.monotonic())
        if len(calls) <= times:
            raise error
        return "answer"

    call.calls = calls  # type: ignore[attr-defined]
    return call


@pytest.mark.slow
def test_a_blip_is_retried_with_one_line_for_all_threads(capsys: pytest.CaptureFixture[str]) -> None:
    retry = Retry("postgresql://db/optuna", seconds=10)
    calls = [failing(2), failing(2)]
    answers: list[str] = []
    threads = [threading.Thread(target=lambda c=c: answers.append(retry(c))) for c in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == ["answer", "answer"] and all(len(c.calls) == 3 for c in calls)
    gaps = [b - a for a, b in zip(calls[0].calls, calls[0].calls[1:], strict=False)]
    assert 0.4 < gaps[0] < 1.0 and 0.8 < gaps[1] < 2.0  # 0.5 s, then 1 s (+-20% jitter; a busy CPU)
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["warning: Optuna storage postgresql://db/optuna unreachable (Exception: connection "
                     "refused); retrying for up to 10 s"]  # fmt: skip


def test_a_statement_error_is_not_retried() -> None:
    call = failing(1, ProgrammingError("SELECT nope", {}, Exception("syntax error")))
    with pytest.raises(ProgrammingError):
        Retry("db", seconds=10)(call)
    assert len(call.calls) == 1


@pytest.mark.slow
def test_past_the_window_one_line_then_every_call_fails_at_once() -> None:
    retry = Retry("postgresql://db/optuna", seconds=1)
    with pytest.raises(DatabaseUnavailable) as stopped:
        retry(failing(100))
    assert str(stopped.value).startswith(
        "Optuna storage postgresql://db/optuna unreachable for 1 s (Exception:"
    )
    assert stopped.value.service == "database" and not isinstance(stopped.value, Exception)
    started = time.monotonic()
    with pytest.raises(DatabaseUnavailable, match="connection refused"):
        retry(failing(0))
    assert time.monotonic() - started < 0.1


def test_a_server_that_never_answers_is_given_up_on_not_waited_for_forever(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bench/chaos.py's finding: a listener that accepts the TCP connection and says nothing (a hung proxy,
    a half-open path) kept a worker in libpq's connect for good. With the connect timeout the storage
    gives up as on a refused connection (at the start: the caller's one line), here after ~1 s."""
    import socket

    from harness.fleet.steady_storage import SteadyRDBStorage, connect_args

    monkeypatch.setenv("HARNESS_DB_CONNECT_TIMEOUT", "1")
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the kernel's backlog) and never answers
    url = f"postgresql+psycopg2://harness@127.0.0.1:{silent.getsockname()[1]}/optuna"
    outcome: list[BaseException] = []

    def open_it() -> None:
        try:
            SteadyRDBStorage(url, heartbeat=1, grace=3, retry_seconds=2)
        except BaseException as exc:  # noqa: BLE001 - what it raised is the test's subject
            outcome.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=open_it, daemon=True)
    thread.start()
    thread.join(timeout=30)
    silent.close()
    assert not thread.is_alive(), "still waiting on a server that never answers"
    assert isinstance(outcome[0], OperationalError) and time.monotonic() - started < 15
    assert "timeout expired" in str(outcome[0])  # the caller turns it into its one line, as a refusal
    assert connect_args(url)["connect_timeout"] == 1 and connect_args(url + "?connect_timeout=5") == {
        k: v for k, v in connect_args(url).items() if k != "connect_timeout"}  # fmt: skip
    assert connect_args("sqlite:///x.db") == {}
