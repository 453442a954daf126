"""Which harness files a reader must open to follow one trial: the files whose functions run.

Runs `harness run-study` on a one-trial study (unsup_simcse on all-MiniLM-L6-v2, two steps, the quick
evaluation) under `sys.setprofile` and lists each harness source file in which at least one function,
method or lambda was called. Module and class bodies (what an import executes) are left out: they are
read when a file is opened for its functions, never followed on their own. Two lists come out: the
whole command (spec, study set-up, workers, the trial, the summary) and the trial alone (from the
moment `run_trial` is entered until it returns).

    .venv/bin/python bench/trial_files.py                # this checkout
    .venv/bin/python bench/trial_files.py --list         # and the files themselves

Works on older checkouts too (it finds `run_trial` and the CLI by name), so a before/after count is
this script run in two clones.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType

STUDY = """\
name: trial_files
description: one unsup_simcse trial, followed end to end
base:
  method: unsup_simcse
  model: all-MiniLM-L6-v2
  contrastive_data: [wiki]
  max_steps: 2
  eval_every: 2
  final_tasks: [quick]
search:
  temperature: [0.05]
"""

FUNCTION = inspect.CO_NEWLOCALS  # set for functions, unset for module and class bodies


class Follower:
    """Records the harness files whose functions are called, overall and inside `run_trial`."""

    def __init__(self, package: Path) -> None:
        self.package = str(package) + "/"
        self.whole: set[str] = set()
        self.trial: set[str] = set()
        self.depth = 0

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if not code.co_filename.startswith(self.package) or not code.co_flags & FUNCTION:
            return
        name = code.co_filename[len(self.package) :]
        in_trial = code.co_name == "run_trial" and name.endswith("trial.py")
        if event == "call":
            self.whole.add(name)
            self.depth += in_trial
            if self.depth:
                self.trial.add(name)
        elif event == "return" and in_trial:
            self.depth -= 1


def _cli_main(package: Path):  # noqa: ANN202 - the entry point moved between checkouts
    if (package / "commands" / "cli.py").exists():
        from harness.commands.cli import main
    else:
        from harness.cli import main  # type: ignore[no-redef]
    return main


def _folders(files: set[str]) -> int:
    return len({f.rsplit("/", 1)[0] if "/" in f else "." for f in files})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the files, not only their counts")
    parser.add_argument("--data-dir", default="../shared/data", help="the shared data folder")
    args = parser.parse_args()
    import harness

    package = Path(harness.__file__).parent
    follower = Follower(package)
    with tempfile.TemporaryDirectory() as scratch:
        study = Path(scratch, "trial_files.yaml")
        study.write_text(STUDY)
        uri = f"sqlite:///{scratch}/mlflow.db"
        places = [
            "--tracking-uri",
            uri,
            "--storage",
            f"{scratch}/optuna.journal",
            "--data-dir",
            args.data_dir,
        ]
        sys.argv = ["harness", "run-study", str(study), "--no-progress", *places]
        main_fn = _cli_main(package)
        sys.setprofile(follower)
        threading.setprofile(follower)
        try:
            main_fn()
        except SystemExit as stop:
            if stop.code:
                raise
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    for label, files in (("whole run-study", follower.whole), ("inside run_trial", follower.trial)):
        print(f"{label}: {len(files)} files in {_folders(files)} folders")
        if args.list:
            print("  " + "\n  ".join(sorted(files)))


if __name__ == "__main__":
    main()
