"""Small builders shared by the end-to-end tests."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from harness.tracking.tracker import Tracker


def tiny_study(
    tmp_path: Path, tiny_bert: Path, search: dict, name: str = "lambda_tau_sweep", **base: object
) -> str:
    """A study YAML that trains the tiny BERT for a few steps on local SNLI dev. A run scored on embeddings
    gets its final scores on the STS-B test set alone (`quick`: 2.8k sentences, where STS12-16, STS-B and
    SICK-R are 26k, ~3 s a trial on one core); `final_tasks=None` gives the full STS evaluation."""
    base = {
        "method": "scl",
        "model": str(tiny_bert),
        "train_data": "snli_local",
        "snli_splits": ["dev"],
        "train_limit": 60,
        "batch_size": 16,
        "max_steps": 4,
        "eval_every": 2,
        "log_every": 1,
        "max_seq_length": 32,
        "precision": "fp32",
        "eval_batch_size": 512,
        **base,
    }
    if "final_tasks" not in base and _scored_on_embeddings(base):
        base["final_tasks"] = ["quick"]
    config = {
        "name": name,
        "default_profile": "tiny",
        "base": base,
        "search": search,
        "profiles": {"tiny": {}},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _scored_on_embeddings(base: dict) -> bool:
    """Whether the base's method reads `final_tasks` (its objective scores embeddings on STS)."""
    from harness.errors import HarnessError
    from harness.resolve.run_spec import resolve_run

    try:
        return resolve_run(dict(base)).scorer.reads_final_tasks
    except HarnessError:  # an invalid base: the test's own load_study reports it
        return False


def child_runs(study: str, tracking_uri: str | None = None) -> list:
    tracker = Tracker(tracking_uri)
    experiment = tracker.client.get_experiment_by_name(study)
    return tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'trial'")


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real `harness` command line in a subprocess, with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def harness_here(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The `harness` command line run in this process (its real `main`: parsing, one-line errors, exit
    codes), for tests of what a command prints and writes rather than of the process itself: a new Python
    process pays ~8 s of imports (torch, transformers, MLflow) on a 2-core CPU. The environment, argv and
    torch's thread count are restored afterwards."""
    from harness.commands.cli import main

    saved_env, saved_argv = dict(os.environ), sys.argv
    threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
    out, err, code = io.StringIO(), io.StringIO(), 0
    os.environ.update(env or {})
    sys.argv = ["harness", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        if threads is not None:
            sys.modules["torch"].set_num_threads(threads)
    return subprocess.CompletedProcess(["harness", *args], code, out.getvalue(), err.getvalue())


def on_a_terminal(*args: str, timeout: float = 300) -> tuple[int, str]:
    """Run the real `harness` command line in a subprocess whose stdout and stderr are a pseudo-terminal,
    as a researcher's shell gives them (bars on, `isatty` true): its exit code and everything it wrote.
    The environment is this test's without what importing the harness here set (MLflow's bar switch)."""
    import pty
    import select

    shell = {k: v for k, v in os.environ.items() if k != "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"}
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "harness", *args], stdin=subprocess.DEVNULL,
                               stdout=follower, stderr=follower, env=shell)  # fmt: skip
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([leader], [], [], 0.5)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        elif process.poll() is not None:
            break
    os.close(leader)
    code = process.wait(timeout=max(deadline - time.monotonic(), 1))
    return code, b"".join(chunks).decode(errors="replace")
