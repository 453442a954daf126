"""Where the harness keeps its local state (stores, caches, machine facts), and where the shipped study
files are (`STUDIES_DIR`): no heavy imports here.

The home is found the way git finds its repository: `HARNESS_HOME` if set, else the nearest `.harness/`
folder in the working directory or a parent (not across a mount point), else `.harness/` here, which only
commands that write create. So `harness studies`, `report` or `ui` run from a subfolder of a project read
the project's store, and a command that finds none can say where it looked (`missing_store`)."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "HARNESS_HOME"
STUDIES_DIR = Path(__file__).resolve().parents[1] / "studies"  # the shipped study files
FOLDER = ".harness"


def find_home(start: Path | None = None) -> tuple[Path, bool]:
    """(the home, whether it was given or found): HARNESS_HOME (given), else the nearest existing
    `.harness/` in `start` (default: the working directory) or a parent on the same file system (found),
    else `.harness/` in `start` (defaulted: it may not exist)."""
    given = os.environ.get(HOME_ENV)
    if given:
        return Path(given).resolve(), True
    here = (start or Path.cwd()).resolve()
    device = _device(here)
    for folder in (here, *here.parents):
        if device is not None and _device(folder) not in (device, None):
            break  # a mount boundary, as git stops without GIT_DISCOVERY_ACROSS_FILESYSTEM
        if (folder / FOLDER).is_dir():
            return folder / FOLDER, True
    return here / FOLDER, False


def harness_home() -> Path:
    """The home `find_home` picks: where local stores, caches and machine facts live."""
    return find_home()[0]


def missing_store(store: Path, what: str = "MLflow store") -> str:
    """The words for a store file (`what`: the MLflow sqlite store, the Optuna journal) that does not
    exist: for the home's own, where the home came from (so a command run in the wrong folder says where it
    looked); for another path, the path."""
    home, found = find_home()
    here = Path.cwd().resolve()
    if store.parent.resolve() != home:
        return f"no {what} at {store}"
    if os.environ.get(HOME_ENV):
        return f"no {what} at {store} ({HOME_ENV})"
    if not found:
        return f"no {FOLDER}/ store here or above {here}"
    return f"no {what} at {store}" + ("" if home.parent == here else f" (the nearest {FOLDER}/ above {here})")


def _device(path: Path) -> int | None:
    try:
        return path.stat().st_dev
    except OSError:
        return None
