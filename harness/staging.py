"""Folders built next to their destination and moved into place at the end, so that an error leaves
nothing half-written (reports, the book, exported models)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.errors import writable_dir


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def staging_dir(parent: Path, prefix: str, what: str) -> Path:
    """A new empty folder in `parent` (created if missing; one-line error if it cannot be written),
    with the permissions of a folder made by mkdir (mkdtemp's are 0700)."""
    writable_dir(parent, what, "give --out a writable directory")
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    staging.chmod(0o777 & ~_umask())
    return staging
