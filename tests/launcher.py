"""`harness` processes for the process tests, forked from a server that imported the harness once.

A new `python -m harness ...` pays ~8 s of CPU for its imports (torch, transformers, MLflow) on a 2-core
CPU before it does anything; the fault, scale-out and signal tests start ~20 of them. `launch` starts the
same command as a child of a multiprocessing fork server whose Python has already imported the harness's
worker modules: the child is a real process of its own (own pid and session, its own database and MLflow
connections, signals and exit codes as the real command's) running the real `harness.cli.main` with the
given argv, environment and working directory, and its output in a log file. What it does not retest is
the import itself; tests/test_launcher.py checks that a launched command behaves as a fresh one, and the
determinism and import tests keep starting fresh interpreters.

Nothing in the server may start a thread pool or CUDA before it forks: it only imports.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

# what a worker and a coordinator import; the fork server imports them once, with no work done
PRELOAD = ["harness.cli", "harness.runner", "harness.trial", "harness.workers", "harness.steady_storage"]
_context: multiprocessing.context.ForkServerContext | None = None


def _fork_server() -> multiprocessing.context.ForkServerContext:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def _run_harness(args: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    """The child: a session of its own (as `start_new_session`), stdout and stderr into `log`, then the
    command as `python -m harness` runs it, exit handlers included, and its exit status. Ctrl-C and
    SIGTERM act as in a process started from a terminal, whatever the test run's own dispositions are."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = ["harness", *args]
    code = 0
    try:
        from harness.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:  # what an uncaught exception does to `python -m harness`
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()  # multiprocessing's children skip them; a real process runs them
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


class Launched:
    """The part of `subprocess.Popen` the tests use, for a launched `harness` process."""

    def __init__(self, args: list[str], log: Path, env: dict[str, str] | None) -> None:
        self.args = ["harness", *args]
        self.log = log
        full_env = {**os.environ, **(env or {})}
        self._proc = _fork_server().Process(target=_run_harness, args=(args, full_env, os.getcwd(), str(log)))
        self._proc.start()
        self.pid: int = self._proc.pid  # type: ignore[assignment]

    @property
    def returncode(self) -> int | None:
        return self._proc.exitcode

    def poll(self) -> int | None:
        return self._proc.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._proc.join(timeout)
        if self._proc.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._proc.exitcode

    def send_signal(self, sig: int) -> None:
        if self._proc.exitcode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def harness_command(command: list[str]) -> list[str] | None:
    """The harness arguments of `[python, -m, harness, ...]`, or None for any other command."""
    if command[:3] == [sys.executable, "-m", "harness"]:
        return command[3:]
    return None


def launch(args: list[str], log: Path, env: dict[str, str] | None = None) -> Launched:
    """`python -m harness *args` with this process's environment plus `env`, output appended to `log`."""
    return Launched(list(args), log, env)
