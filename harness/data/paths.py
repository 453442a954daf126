"""Where the data lives: `--data-dir`, else HARNESS_DATA_DIR, else ../shared/data when it exists."""

from __future__ import annotations

import os
from pathlib import Path

from harness.data.lineage import note_read
from harness.errors import HarnessError

ENV_VAR = "HARNESS_DATA_DIR"


def default_candidates() -> list[Path]:
    """../shared/data relative to the working directory and to the repository checkout."""
    repo = Path(__file__).resolve().parents[2]
    return [Path.cwd().parent / "shared" / "data", repo.parent / "shared" / "data"]


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data root, checked to exist; a one-line error names the path and the variable."""
    if explicit:
        root = Path(explicit).expanduser()
        source = "--data-dir"
    elif os.environ.get(ENV_VAR):
        root = Path(os.environ[ENV_VAR]).expanduser()
        source = ENV_VAR
    else:
        for candidate in default_candidates():
            if candidate.is_dir():
                return candidate.resolve()
        raise HarnessError(
            f"no data directory: ../shared/data does not exist; pass --data-dir or set {ENV_VAR}"
        )
    if not root.is_dir():
        raise HarnessError(
            f"data directory {root} (from {source}) does not exist; fix --data-dir or {ENV_VAR}"
        )
    return root.resolve()


def require_file(path: Path) -> Path:
    """`path` if it is a file (noted as read), else a one-line error naming it and where to point instead."""
    if not path.is_file():
        raise HarnessError(f"missing data file {path}; check --data-dir or {ENV_VAR}")
    note_read(path)  # the run's data lineage (harness.data.lineage)
    return path
