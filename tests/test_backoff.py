"""harness.backoff: a call made again while its failure is transient, waits 0.5, 1, 2, 4, 8, 15, 15, ... s
(+-20 %), the last one cut to end with the window. A clock that advances only by the waits makes the
schedule exact to check."""

from __future__ import annotations

import itertools
import types

import pytest

from harness import backoff


class Clock:
    """time.monotonic and time.sleep for harness.backoff: the time moves only when it sleeps."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


class Refused(Exception):
    pass


def failing(times: int, error: Exception | None = None):  # type: ignore[no-untyped-def]
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise error or Refused("connection refused")
        return "answer"

    call.calls = calls  # type: ignore[attr-defined]
    return call


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(backoff, "time", types.SimpleNamespace(monotonic=fake.monotonic, sleep=fake.sleep))
    return fake


def is_refused(exc: Exception) -> bool:
    return isinstance(exc, Refused)


def test_a_transient_failure_is_made_again_with_doubling_waits(clock: Clock) -> None:
    seen: list[float] = []
    call = failing(7)
    answer = backoff.retried_for(call, 600, is_refused, lambda exc, elapsed: seen.append(elapsed))
    assert answer == "answer" and len(call.calls) == 8
    for wait, nominal in zip(clock.waits, [0.5, 1, 2, 4, 8, 15, 15], strict=True):
        assert 0.8 * nominal <= wait <= 1.2 * nominal
    assert seen[0] == 0.0 and seen[1:] == pytest.approx(list(itertools.accumulate(clock.waits))[:-1])


def test_past_the_window_the_last_failure_goes_on_or_what_give_up_makes_of_it(clock: Clock) -> None:
    with pytest.raises(Refused):
        backoff.retried_for(failing(100), 10, is_refused)
    # the last wait is cut to end with the window: one more try there, none after (a jittered cut wait
    # would leave a sliver of window and a burst of retries in it)
    assert sum(clock.waits) == pytest.approx(10) and sum(clock.waits[:-1]) < 10

    class Down(BaseException):
        pass

    with pytest.raises(Down) as raised:
        backoff.retried_for(failing(100), 3, is_refused, give_up=lambda exc: Down(f"gone: {exc}"))
    assert str(raised.value) == "gone: connection refused" and raised.value.__suppress_context__


def test_an_error_that_is_not_transient_goes_on_at_once(clock: Clock) -> None:
    call = failing(1, ValueError("syntax error"))
    with pytest.raises(ValueError, match="syntax error"):
        backoff.retried_for(call, 60, is_refused)
    assert len(call.calls) == 1 and clock.waits == []
