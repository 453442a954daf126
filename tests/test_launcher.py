"""tests/launcher.py: a `harness` command launched from the preloaded fork server behaves as the same
command in a fresh `python -m harness` process: output, exit status, environment and working directory.
(Signals and exit codes of launched runs: tests/test_runner.py's interrupted-study tests.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import harness
from tests.launcher import launch

COMMANDS = [
    ["run-study", "no_such_study"],  # a one-line error, exit 2
    ["run-study", "lambda_tau_sweep", "--dry-run"],  # reads HARNESS_DATA_DIR when it runs, not at import
    ["dashboard", "--storage", "missing.journal"],  # a path relative to the working directory
]


@pytest.mark.parametrize("args", COMMANDS, ids=["error", "dry-run", "relative-path"])
def test_a_launched_command_prints_and_exits_as_a_fresh_one(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"HARNESS_DATA_DIR": str(tmp_path / "no-data")}
    fresh = harness(*args, env=env)
    launched = launch(args, tmp_path / "launched.log", env)
    assert launched.wait(timeout=60) == fresh.returncode
    assert launched.output() == fresh.stdout + fresh.stderr
