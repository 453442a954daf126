"""`harness` commands in processes forked from a fork server that has imported the harness once.

A new `python -m harness worker ...` spends ~8 s of CPU on imports (torch, transformers, MLflow) on a
2-core CPU before it takes a trial. `run-study --workers N` starts its workers here instead: the first
start launches a multiprocessing fork server (a fresh interpreter, not a fork of the coordinator with its
threads and database connections) that imports the worker's modules and does nothing else; every worker,
and every replacement of a killed one, is then a fork of it that runs the real `harness.commands.cli.main`
with its own argv and environment. The server only imports: no thread pool, no CUDA context exists before a
fork, so each worker sets its own threads and `CUDA_VISIBLE_DEVICES` as a fresh process would (a module
that touched CUDA at import time would break this; `_run_command` checks). Where the platform has no
fork server (Windows) `available()` says so and callers start `python -m harness` instead.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path

# What a worker imported only on its way through a trial, 1.1 s of CPU each on a 2-core AMD EPYC
# (python -X importtime): MLflow's database store, which its client imports on opening a sqlite or
# PostgreSQL store (0.8 s: SQLAlchemy's ORM, alembic; not needed with a tracking server, imported once
# here all the same), and scipy.stats (0.3 s: the STS correlations).
LATER_IMPORTS = ["mlflow.store.tracking.sqlalchemy_store", "scipy.stats",
                 # the per-item record (a pandas frame written as Parquet) and its resamples
                 "pandas", "pandas.core.arrays.arrow.extension_types", "pyarrow.parquet",
                 "pyarrow.pandas_compat",
                 "harness.stats.items", "harness.stats.resample"]  # fmt: skip
ENTRY = "harness.commands.cli:main"  # the `harness` command (pyproject.toml [project.scripts]); named, not
# imported: the command line sits above the workers that start it
# what a worker and a coordinator import; the fork server imports them once and does nothing else; the last
# one freezes what the imports made (harness.fleet.fork_server_ready), so no fork collects it again
PRELOAD = ["harness.commands.cli", "harness.study.runner", "harness.study.trial", "harness.study.workers",
           "harness.fleet.steady_storage", *LATER_IMPORTS, "harness.fleet.fork_server_ready"]  # fmt: skip
_context: multiprocessing.context.ForkServerContext | None = None


def available() -> bool:
    return "forkserver" in multiprocessing.get_all_start_methods()


def _fork_server() -> multiprocessing.context.ForkServerContext:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def _run_command(args: list[str], env: dict[str, str], cwd: str, log: str | None, new_session: bool) -> None:
    """The child: the command as `python -m harness` runs it (exit handlers included) and its exit status.
    Ctrl-C and SIGTERM act as in a process started from a terminal, whatever the server inherited."""
    if new_session:
        os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if log is not None:
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
        import torch

        if torch.cuda.is_initialized():  # a preloaded module touched CUDA at import time
            raise RuntimeError("the fork server initialised CUDA before forking: its workers cannot use it")
        module, _, name = ENTRY.partition(":")
        getattr(importlib.import_module(module), name)()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:  # what an uncaught exception does to `python -m harness`
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()  # multiprocessing's children skip the exit handlers; a real process runs them
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


class ForkedCommand:
    """A running forked `harness` command, with the part of `subprocess.Popen` callers use."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path | None, new_session: bool) -> None:
        self.args = ["harness", *args]
        self.log = log
        logged = None if log is None else str(log)
        self._proc = _fork_server().Process(
            target=_run_command, args=(args, env, os.getcwd(), logged, new_session), daemon=False
        )
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

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def output(self) -> str:
        """What the command wrote, where it writes to a log."""
        return self.log.read_text(errors="replace") if self.log and self.log.exists() else ""


def start(
    args: list[str], env: dict[str, str] | None = None, log: Path | None = None, new_session: bool = False
) -> ForkedCommand:
    """`harness *args` forked from the fork server, with `env` as its whole environment (default: this
    process's), output to `log` (default: this process's stdout and stderr, as the server inherited them),
    in a session of its own if `new_session`."""
    return ForkedCommand(list(args), dict(os.environ if env is None else env), log, new_session)
