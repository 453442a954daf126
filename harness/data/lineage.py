"""Which data files a run read, and what they held: the lineage a released model is traced back with.

Readers report each local file they open (`note_read`; `require_file` does it for them). A run collects
what is read inside `reading()` (the innermost collector gets it, so a dev evaluation inside training can
keep its files apart). Readers cached per process (`cached_reader`, in place of `functools.lru_cache`)
hand their files on again at every cache hit, so the second trial of a worker records what it read too.

A file's fingerprint is its size and sha256 (`fingerprint`), computed once and kept in
`.harness/cache/fingerprints.json` under its path, size and modification time: a file is hashed again only
when one of those changes."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from harness.home import harness_home

F = TypeVar("F", bound=Callable[..., Any])
_COLLECTORS: list[set[Path]] = []
_KNOWN: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256, this process


def note_read(path: Path) -> None:
    """`path` was read: the innermost `reading()` block, if any, records it."""
    if _COLLECTORS:
        _COLLECTORS[-1].add(Path(path).resolve())


@contextlib.contextmanager
def reading() -> Iterator[set[Path]]:
    """The set of files read while the block runs (files read in an inner block go there only)."""
    files: set[Path] = set()
    _COLLECTORS.append(files)
    try:
        yield files
    finally:
        _COLLECTORS.remove(files)


def cached_reader(maxsize: int) -> Callable[[F], F]:
    """`functools.lru_cache(maxsize)` for a reader, whose cached results still report their files."""

    def wrap(reader: F) -> F:
        @functools.lru_cache(maxsize=maxsize)
        def read_once(*args: Any, **kwargs: Any) -> tuple[Any, frozenset[Path]]:
            with reading() as files:
                result = reader(*args, **kwargs)
            return result, frozenset(files)

        @functools.wraps(reader)
        def read(*args: Any, **kwargs: Any) -> Any:
            result, files = read_once(*args, **kwargs)
            for path in files:
                note_read(path)
            return result

        read.cache_clear = read_once.cache_clear  # type: ignore[attr-defined]
        return read  # type: ignore[return-value]

    return wrap


def _store() -> Path:
    return harness_home() / "cache" / "fingerprints.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(path: Path) -> dict[str, object]:
    """`{"bytes": size, "sha256": hex}` of a file, hashed only when its size or modification time changed
    since the last time (in this process, or any process using the same `.harness/`)."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _KNOWN:
        store = _store()
        stored = json.loads(store.read_text()) if store.is_file() else {}
        entry = stored.get(key[0])
        if entry and (entry["bytes"], entry["mtime_ns"]) == key[1:]:
            _KNOWN[key] = entry["sha256"]
        else:
            _KNOWN[key] = _sha256(path)
            stored[key[0]] = {"bytes": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": _KNOWN[key]}
            store.parent.mkdir(parents=True, exist_ok=True)
            handle, scratch = tempfile.mkstemp(dir=store.parent, suffix=".tmp")
            with os.fdopen(handle, "w") as out:
                json.dump(stored, out)
            os.replace(scratch, store)  # another process's entry may be lost: it is only hashed again
    return {"bytes": key[1], "sha256": _KNOWN[key]}


def lineage(files: set[Path], data_dir: Path) -> list[dict[str, object]]:
    """Each file with its fingerprint, named relative to the data folder where it lies inside it."""
    root = data_dir.resolve()
    rows = []
    for path in sorted(files):
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        rows.append({"path": name, **fingerprint(path)})
    return rows
