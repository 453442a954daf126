"""tests/launcher.py: a `harness` command launched from the preloaded fork server behaves as the same
command in a fresh `python -m harness` process: output, exit status, environment and working directory.
(Signals and exit codes of launched runs: tests/study/test_runner.py's interrupted-study tests.)"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import harness, tiny_study
from tests.launcher import forked_calls, launch

COMMANDS = [
    ["run-study", "no_such_study"],  # a one-line error, exit 2
    ["run-study", "lambda_tau_sweep", "--dry-run"],  # reads HARNESS_DATA_DIR when it runs, not at import
    ["dashboard", "--storage", "missing.journal"],  # a path relative to the working directory
]


@pytest.mark.slow
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


@pytest.mark.slow
def test_forked_commands_start_with_the_servers_imports_frozen() -> None:
    """The fork server freezes what its imports made (harness.fleet.fork_server_ready), so a worker's first
    collection (harness.study.runner.freeze_what_is_loaded) scans only its own objects: 333 ms -> 0 a
    start."""
    (frozen,) = forked_calls(gc.get_freeze_count, ())
    assert frozen > 100_000  # torch, transformers, MLflow: ~500k objects


def _imports_of_a_trial(study: str, env: dict[str, str]) -> tuple[object, list[str]]:
    before = set(sys.modules)
    os.environ.update(env)
    sys.argv = ["harness", "run-study", study, "--no-progress"]
    from harness.commands.cli import main

    try:
        main()
    except SystemExit as exc:
        return exc.code, []
    return 0, sorted(set(sys.modules) - before)


@pytest.mark.slow
def test_a_forked_trial_imports_almost_nothing_the_server_has_not(tmp_path: Path, tiny_bert: Path) -> None:
    """What a trial imports on its way (MLflow's database store, scipy.stats: 1.1 s of CPU a worker) is in
    the fork server's preload (harness.fleet.forked.LATER_IMPORTS): a forked process that runs a whole study
    of one trial imports only a few small modules (31 now; 563 before they were preloaded)."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="preloaded", max_steps=2)
    ((code, new),) = forked_calls(_imports_of_a_trial, (study, dict(os.environ)))
    assert code == 0
    assert len(new) < 60 and not {name.split(".")[0] for name in new} & {"scipy", "sklearn", "pandas"}, new
