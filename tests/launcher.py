"""`harness` processes for the process tests, forked from the harness's preloaded fork server.

A new `python -m harness ...` pays ~8 s of CPU for its imports (torch, transformers, MLflow) on a 2-core
CPU; the fault, scale-out and signal tests start ~20 of them. `launch` starts the same command with
`harness.fleet.forked` (what `run-study --workers N` starts its workers with): a real process of its own (own
pid and session, its own database and MLflow connections, the real command's signals and exit codes)
running the real `harness.commands.cli.main` with the given argv, environment and working directory, its
output in a log file. What it does not retest is the import itself: tests/test_launcher.py checks that a
launched command behaves as a fresh one, and the determinism and import tests keep starting fresh
interpreters.
"""

from __future__ import annotations

import os
import queue
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.fleet.forked import ForkedCommand, _fork_server, start

Launched = ForkedCommand


def harness_command(command: list[str]) -> list[str] | None:
    """The harness arguments of `[python, -m, harness, ...]`, or None for any other command."""
    if command[:3] == [sys.executable, "-m", "harness"]:
        return command[3:]
    return None


def launch(args: list[str], log: Path, env: dict[str, str] | None = None) -> Launched:
    """`python -m harness *args` with this process's environment plus `env`, in a session of its own (as
    `start_new_session`), output appended to `log`."""
    return start(list(args), {**os.environ, **(env or {})}, log, new_session=True)


def _put_result(out: Any, index: int, target: Callable[..., object], args: tuple) -> None:
    try:
        out.put((index, True, target(*args)))
    except BaseException:
        out.put((index, False, traceback.format_exc()))
        raise


def forked_calls(target: Callable[..., object], *calls: tuple, timeout: float = 120.0) -> list[object]:
    """`target(*args)` for each `args` in `calls`, each in its own process forked from the fork server
    (all started before any is waited for), and what each returned, in the order of `calls`. A call that
    raised fails the test with its traceback, a process that died without an answer with its exit code,
    and all of them together get `timeout` seconds; none outlives the call."""
    server = _fork_server()
    out = server.Queue()
    children = [server.Process(target=_put_result, args=(out, i, target, a)) for i, a in enumerate(calls)]
    results: dict[int, object] = {}
    deadline = time.monotonic() + timeout
    try:
        for child in children:
            child.start()
        while len(results) < len(children):
            try:
                index, ok, value = out.get(timeout=1.0)
            except queue.Empty:
                dead = [(i, c.exitcode) for i, c in enumerate(children) if c.exitcode is not None]
                lost = [(i, code) for i, code in dead if i not in results]
                assert not lost, f"forked call {lost[0][0]} ended with exit code {lost[0][1]} and no answer"
                assert time.monotonic() < deadline, f"forked calls still running after {timeout} s"
                continue
            assert ok, value
            results[index] = value
        return [results[i] for i in range(len(children))]
    finally:
        for child in children:
            child.join(max(0.0, deadline - time.monotonic()) if child.exitcode is None else 0)
            if child.exitcode is None:
                child.kill()
                child.join()
