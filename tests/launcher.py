"""`harness` processes for the process tests, forked from the harness's preloaded fork server.

A new `python -m harness ...` pays ~8 s of CPU for its imports (torch, transformers, MLflow) on a 2-core
CPU; the fault, scale-out and signal tests start ~20 of them. `launch` starts the same command with
`harness.forked` (what `run-study --workers N` starts its workers with): a real process of its own (own
pid and session, its own database and MLflow connections, the real command's signals and exit codes)
running the real `harness.cli.main` with the given argv, environment and working directory, its output in
a log file. What it does not retest is the import itself: tests/test_launcher.py checks that a launched
command behaves as a fresh one, and the determinism and import tests keep starting fresh interpreters.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.forked import ForkedCommand, _fork_server, start

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


def _put_result(out: Any, target: Callable[..., object], args: tuple) -> None:
    try:
        out.put((True, target(*args)))
    except BaseException:
        out.put((False, traceback.format_exc()))
        raise


def forked_calls(target: Callable[..., object], *calls: tuple, timeout: float = 120.0) -> list[object]:
    """`target(*args)` for each `args` in `calls`, each in its own process forked from the fork server
    (all started before any is waited for), and what each returned, in the order they finished; a call
    that raised fails the test with its traceback."""
    server = _fork_server()
    out = server.Queue()
    children = [server.Process(target=_put_result, args=(out, target, args)) for args in calls]
    for child in children:
        child.start()
    results = [out.get(timeout=timeout) for _ in children]  # before joining: a child exits once read
    for child in children:
        child.join(timeout)
    failed = [value for ok, value in results if not ok]
    assert not failed, failed[0]
    return [value for _, value in results]
