"""Folders built next to their destination and moved into place at the end, so that an error leaves
nothing half-written (reports, the book, exported models)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def staged(parent: Path, prefix: str, what: str) -> Iterator[Path]:
    """`staging_dir(parent, ...)` for the block; on an error it is removed, and so are the folders made
    for it (`parent` and its missing ancestors: no empty reports/build after a failed report). The block
    moves what it built into place; whatever is left of the staging folder is removed afterwards."""
    made = [folder for folder in (parent, *parent.parents) if not folder.exists()]
    staging = staging_dir(parent, prefix, what)
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # innermost first
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def written_atomically(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` for the block to write; renamed onto `path` when the block ends,
    removed if it fails: `path` is a complete file or untouched."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    try:
        yield Path(scratch)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise
