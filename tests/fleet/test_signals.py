"""harness.fleet.signals in this process: SIGTERM as Ctrl-C, signals held across a journal write, pause
points."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock

from harness.fleet.pause_points import reached
from harness.fleet.signals import (
    SteadyJournalBackend,
    Terminated,
    signals_held,
    sigterm_as_interrupt,
    stop_reason,
    stop_signal,
)


@pytest.fixture(autouse=True)
def python_default_handlers() -> object:
    """These tests signal this process and rely on Python's own handlers being in place (Ctrl-C raises
    KeyboardInterrupt): set them for each test and put back what was there. In one fresh-clone run every
    self-sent SIGINT of this module went unanswered in one xdist worker, after some earlier test of that
    worker had left another SIGINT handler; three later full runs, checking the handlers after every test,
    did not see it again."""
    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGINT, saved[0])
    signal.signal(signal.SIGTERM, saved[1])


def test_sigterm_raises_terminated_inside_the_block_and_the_handlers_come_back() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(Terminated) as caught, sigterm_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # never reached: the handler raises in this (the main) thread
    assert isinstance(caught.value, KeyboardInterrupt)  # every Ctrl-C path handles it
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    assert (
        stop_reason(caught.value) == "terminated by SIGTERM" and stop_signal(caught.value) == signal.SIGTERM
    )
    assert (
        stop_reason(KeyboardInterrupt()) == "interrupted (Ctrl-C)" and stop_signal(KeyboardInterrupt()) == 2
    )


def test_a_pause_point_sleeps_only_where_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' pauser (tests/pauses.py, installed by conftest) holds a process at the points its
    environment names; an unknown point is an error, not a silent no-op."""
    monkeypatch.setenv("HARNESS_PAUSE_AT", "trial_run_created=0.3, trial_started=0")
    started = time.monotonic()
    reached("trial_started")
    assert time.monotonic() - started < 0.1
    reached("trial_run_created")
    assert time.monotonic() - started >= 0.3
    with pytest.raises(ValueError, match="unknown pause point"):
        reached("trial_strated")


def test_a_second_signal_during_the_clean_up_ends_the_process_at_once() -> None:
    """Issue 26 item 1: the first SIGTERM starts the clean stop; a second one does not wait for it."""
    import subprocess
    import sys

    code = ("import sys, time\nfrom harness.fleet.signals import Terminated, sigterm_as_interrupt\n"
            "with sigterm_as_interrupt():\n    try:\n        print('ready', flush=True); time.sleep(60)\n"
            "    except Terminated:\n        print('cleaning up', flush=True); time.sleep(60)\n")  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "cleaning up\n"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == -signal.SIGTERM and time.monotonic() - started < 5


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_held_signal_acts_when_the_block_ends(signum: int) -> None:
    """signals_held: the block runs to its end, then the handler in place before it acts (Terminated for
    SIGTERM, which also sets both signals to their default action; KeyboardInterrupt for Ctrl-C)."""
    finished = []
    with sigterm_as_interrupt():
        before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt) as caught, signals_held():
            os.kill(os.getpid(), signum)
            os.kill(os.getpid(), signal.SIGINT if signum == signal.SIGTERM else signal.SIGTERM)
            finished.append(True)
        after = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
        assert finished == [True] and after == (before if signum == signal.SIGINT else (signal.SIG_DFL,) * 2)
        assert isinstance(caught.value, Terminated) == (signum == signal.SIGTERM)  # the first one counts


def test_nothing_held_nothing_raised() -> None:
    with signals_held():
        pass


class CtrlCWhileLocked(JournalFileSymlinkLock):
    """The lock of a process that receives Ctrl-C just after taking it."""

    def acquire(self) -> bool:
        taken = super().acquire()
        os.kill(os.getpid(), signal.SIGINT)
        return taken


@pytest.mark.parametrize("backend", [SteadyJournalBackend, JournalFileBackend], ids=["steady", "optuna"])
def test_ctrl_c_inside_a_write_acts_after_it(tmp_path: Path, backend: type[JournalFileBackend]) -> None:
    path = tmp_path / "optuna.journal"
    journal = backend(str(path), lock_obj=CtrlCWhileLocked(str(path)))
    with pytest.raises(KeyboardInterrupt):
        journal.append_logs([{"op_code": 0, "worker_id": "w"}])
    written = [json.loads(line) for line in path.read_text().splitlines()]
    leftover = [p.name for p in tmp_path.iterdir() if p != path]
    if backend is SteadyJournalBackend:
        assert written == [{"op_code": 0, "worker_id": "w"}] and leftover == []
    else:  # Optuna's own backend, for contrast: nothing written and its lock left for others to wait out
        assert written == [] and leftover == ["optuna.journal.lock"]
