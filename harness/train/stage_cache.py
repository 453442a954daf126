"""A content-addressed store of trained stages, shared by trials, studies, processes and machines.

An entry is what the training loop holds between two stages: the tensors the stages so far changed (the
rest of the model is the trial's own, identical initialisation), the best checkpoint so far (likewise),
the global RNG states (torch, CUDA, numpy, python), the step counter and the best dev score and step.
Its key (harness.train.stage_keys) hashes everything that determines that state.

Layout: `<root>/<key[:2]>/<key>/` holding `state.safetensors` and `meta.json` (written last; it records
the state file's size and SHA-256, so a partial or damaged entry is detected, removed and retrained, never
loaded). Writes go to a temporary folder beside the entry and are renamed into place (atomic; if another
process got there first, its entry is kept). Concurrent trials that need the same stage: the first takes
`<key>.lock` (O_EXCL, refreshed every 20 s while it trains); the others wait for the entry, or take the
lock over when it goes stale (its holder died) and train the stage themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from harness.home import harness_home
from harness.processes import alive

STATE = "state.safetensors"
META = "meta.json"
LOCK_REFRESH = 20.0
LOCK_STALE = 90.0


def default_root() -> Path:
    """HARNESS_STAGE_CACHE, else `.harness/stage-cache` (point several machines at one shared folder)."""
    return Path(os.environ.get("HARNESS_STAGE_CACHE") or harness_home() / "stage-cache")


@dataclass
class StageState:
    """The loop's state after a stage: changed tensors, best checkpoint, counters, RNG."""

    tensors: dict[str, torch.Tensor]
    best_tensors: dict[str, torch.Tensor] | None
    step: int
    best: float
    best_step: int
    rng: dict[str, Any]
    source_run: str = ""
    stages: str = ""


def capture_rng() -> dict[str, Any]:
    state = {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():  # the training device's generator only: workers see one GPU each
        state["cuda"] = [torch.cuda.get_rng_state()]
    return state


def restore_rng(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if state.get("cuda") and torch.cuda.is_available():
        torch.cuda.set_rng_state(state["cuda"][0])


def _rng_tensors(rng: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """RNG states as tensors (torch, CUDA) and JSON (numpy, python)."""
    tensors = {"rng/torch": rng["torch"]}
    for index, cuda in enumerate(rng.get("cuda", [])):
        tensors[f"rng/cuda/{index}"] = cuda
    kind, keys, pos, has_gauss, cached = rng["numpy"]
    numpy_state = [kind, keys.tolist(), int(pos), int(has_gauss), float(cached)]
    version, internal, gauss = rng["python"]
    return tensors, {"numpy": numpy_state, "python": [version, list(internal), gauss]}


def _rng_from(tensors: dict[str, torch.Tensor], saved: dict[str, Any]) -> dict[str, Any]:
    kind, keys, pos, has_gauss, cached = saved["numpy"]
    version, internal, gauss = saved["python"]
    rng: dict[str, Any] = {
        "torch": tensors["rng/torch"],
        "numpy": (kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached),
        "python": (version, tuple(internal), gauss),
    }
    cuda = sorted((k for k in tensors if k.startswith("rng/cuda/")), key=lambda k: int(k.rsplit("/", 1)[1]))
    if cuda:
        rng["cuda"] = [tensors[k] for k in cuda]
    return rng


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class StageCache:
    """Entries under `root`; `max_bytes` (0: no limit) evicts the least recently used after a write."""

    def __init__(self, root: Path | None = None, max_bytes: int = 0) -> None:
        self.root = Path(root) if root else default_root()
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        return self.root / key[:2] / key

    # reading --------------------------------------------------------------------------------------
    def load(self, key: str) -> StageState | None:
        """The entry, or None when absent; a partial or damaged one is removed and None returned."""
        from safetensors.torch import load_file

        folder = self.path(key)
        meta_path = folder / META
        if not meta_path.is_file():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            state_path = folder / STATE
            if state_path.stat().st_size != meta["size"] or _sha256(state_path) != meta["sha256"]:
                raise ValueError("state file does not match its recorded size and checksum")
            tensors = load_file(str(state_path))
        except (OSError, ValueError, KeyError) as exc:
            self.discard(key, f"damaged entry ({exc})")
            return None
        with contextlib.suppress(OSError):
            os.utime(meta_path)  # least recently used eviction reads this
        weights = {k.removeprefix("model/"): v for k, v in tensors.items() if k.startswith("model/")}
        best = {k.removeprefix("best/"): v for k, v in tensors.items() if k.startswith("best/")}
        return StageState(
            weights,
            best if meta["has_best"] else None,
            meta["step"],
            float(meta["best"]),
            meta["best_step"],
            _rng_from(tensors, meta["rng"]),
            meta.get("source_run", ""),
            meta.get("stages", ""),
        )

    def discard(self, key: str, why: str = "") -> None:
        shutil.rmtree(self.path(key), ignore_errors=True)

    # writing --------------------------------------------------------------------------------------
    def store(self, key: str, state: StageState, description: dict[str, Any]) -> bool:
        """Write the entry atomically; False when another process wrote it first (theirs is kept)."""
        from safetensors.torch import save_file

        final = self.path(key)
        if (final / META).is_file():
            return False
        final.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(final.parent / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        try:
            rng_tensors, rng_json = _rng_tensors(state.rng)
            tensors = {f"model/{k}": v.detach().cpu().contiguous() for k, v in state.tensors.items()}
            if state.best_tensors is not None:
                tensors |= {f"best/{k}": v.detach().cpu().contiguous() for k, v in state.best_tensors.items()}
            save_file({**tensors, **rng_tensors}, str(scratch / STATE))
            meta = {
                "key": key,
                "size": (scratch / STATE).stat().st_size,
                "sha256": _sha256(scratch / STATE),
                "step": state.step,
                "best": state.best if np.isfinite(state.best) else "-inf",
                "best_step": state.best_step,
                "has_best": state.best_tensors is not None,
                "rng": rng_json,
                "source_run": state.source_run,
                "stages": state.stages,
                "created": time.time(),
                "host": socket.gethostname(),
                "description": description,
            }
            (scratch / META).write_text(json.dumps(meta, indent=1, default=str))
            try:
                scratch.rename(final)
            except OSError:  # another writer's entry is in place (rename onto a non-empty folder fails)
                return False
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        self.enforce_limit(keep=key)
        return True

    # concurrency ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def claim(self, key: str, poll: float = 2.0) -> Iterator[bool]:
        """Hold `key`'s lock while training it: yields True with the lock held, or False once another
        process's entry has appeared (load it instead). Waits while a live holder trains it."""
        lock = self.root / key[:2] / f"{key}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        while True:
            if (self.path(key) / META).is_file():
                yield False
                return
            try:
                handle = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if self._stale(lock):
                    with contextlib.suppress(FileNotFoundError):
                        lock.unlink()
                    continue
                time.sleep(poll)
                continue
            with os.fdopen(handle, "w") as out:
                out.write(
                    json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})
                )
            stop = threading.Event()
            refresher = threading.Thread(target=self._refresh, args=(lock, stop), daemon=True)
            refresher.start()
            try:
                yield True
            finally:
                stop.set()
                refresher.join()
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()
            return

    @staticmethod
    def _refresh(lock: Path, stop: threading.Event) -> None:
        while not stop.wait(LOCK_REFRESH):
            with contextlib.suppress(OSError):
                os.utime(lock)

    @staticmethod
    def _stale(lock: Path) -> bool:
        """A lock whose holder is gone: a dead process on this host, or no refresh for LOCK_STALE s."""
        try:
            holder = json.loads(lock.read_text() or "{}")
            age = time.time() - lock.stat().st_mtime
        except (OSError, ValueError):
            return False  # being written or just removed: look again
        if holder.get("host") == socket.gethostname() and holder.get("pid") and not alive(int(holder["pid"])):
            return True
        return age > LOCK_STALE

    # housekeeping ---------------------------------------------------------------------------------
    def entries(self) -> list[dict[str, Any]]:
        """Every complete entry's meta (with `path`, `bytes`, `used`: last use time), newest use first."""
        found = []
        for meta_path in self.root.glob(f"*/*/{META}"):
            try:
                meta = json.loads(meta_path.read_text())
                used = meta_path.stat().st_mtime
            except (OSError, ValueError):
                continue
            folder = meta_path.parent
            size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
            found.append({**meta, "path": str(folder), "bytes": size, "used": used})
        return sorted(found, key=lambda e: -e["used"])

    def prune(self, older_than: float | None = None, keep: str | None = None) -> list[dict[str, Any]]:
        """Remove entries unused for `older_than` seconds, leftover temporary folders and partial
        entries (no meta.json); return the removed entries."""
        removed = []
        now = time.time()
        for entry in self.entries():
            if older_than is not None and now - entry["used"] > older_than and entry["key"] != keep:
                shutil.rmtree(entry["path"], ignore_errors=True)
                removed.append(entry)
        for folder in self.root.glob("*/*"):
            partial = folder.is_dir() and not (folder / META).is_file()
            if partial and now - folder.stat().st_mtime > 3600:
                shutil.rmtree(folder, ignore_errors=True)
        return removed

    def enforce_limit(self, keep: str | None = None) -> None:
        """With a size limit, remove least recently used entries until the rest fit."""
        if self.max_bytes <= 0:
            return
        entries = self.entries()
        total = sum(e["bytes"] for e in entries)
        for entry in reversed(entries):  # least recently used first
            if total <= self.max_bytes:
                break
            if entry["key"] == keep:
                continue
            shutil.rmtree(entry["path"], ignore_errors=True)
            total -= entry["bytes"]


class CachedStages:
    """The training loop's view of the cache for one trial: which stages may be stored and loaded (all
    but the last), and what was reused or stored (`events`, recorded on the trial's MLflow run)."""

    def __init__(
        self,
        cache: StageCache,
        keys: list[str],
        names: list[str],
        run_id: str,
        description: dict[str, Any],
        remote: Any = None,
    ) -> None:
        self.cache = cache
        self.remote = remote  # entries shared through MLflow artifacts (harness.study.stage_cache_use)
        self.keys = keys
        self.names = names
        self.run_id = run_id
        self.description = description
        self.initial: dict[str, torch.Tensor] = {}
        self.reused: tuple[int, StageState, int] | None = None  # (stages loaded, entry, step before)
        self.stored: list[int] = []
        self.problems: list[str] = []  # cache writes that failed (the trial goes on), for its MLflow run

    def cacheable(self, index: int) -> bool:
        return index < len(self.keys) - 1

    def begin(self, model: torch.nn.Module) -> None:
        """Remember the initial weights: entries hold only what the stages changed."""
        self.initial = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}

    def resume(self, model: torch.nn.Module, state: Any, trained: int = 0) -> int:
        """Load the longest run of leading stages found in the cache into `model` and `state`; return
        the index of the first stage still to train. Entries below `trained` (stages this trial already
        trained) are not considered: when none at or above it loads, `trained` is returned unchanged."""
        for index in range(len(self.keys) - 2, trained - 1, -1):
            entry = self.cache.load(self.keys[index])
            if entry is None and self.remote is not None and self._fetch(self.keys[index]):
                entry = self.cache.load(self.keys[index])
            if entry is None:
                continue
            unknown = set(entry.tensors) - set(self.initial)
            if unknown:  # cannot happen for a correct key; never load a foreign state
                self.cache.discard(self.keys[index], f"tensors this model lacks: {sorted(unknown)[:3]}")
                continue
            device_state = {k: v.to(self.initial[k].dtype) for k, v in entry.tensors.items()}
            model.load_state_dict(device_state, strict=False)
            state.best_state = None if entry.best_tensors is None else {**self.initial, **entry.best_tensors}
            before = state.step
            state.step, state.best, state.best_step = entry.step, entry.best, entry.best_step
            restore_rng(entry.rng)
            self.reused = (index + 1, entry, before)
            return index + 1
        return trained

    def _fetch(self, key: str) -> bool:
        try:
            return bool(self.remote.fetch(key, self.cache))
        except Exception as exc:  # the tracking server is away: train the stage instead
            self.problems.append(f"not fetched from MLflow: {type(exc).__name__}: {exc}")
            return False

    @contextlib.contextmanager
    def claim(self, index: int) -> Iterator[bool]:
        """The cache's claim on the stage's key; where the cache folder cannot be written, True (train
        it, unlocked) and a note for the run."""
        try:
            claimed = self.cache.claim(self.keys[index])
            mine = claimed.__enter__()
        except OSError as exc:
            self.problems.append(f"no lock for {self.names[index]}: {exc}")
            yield True
            return
        try:
            yield mine
        finally:
            claimed.__exit__(None, None, None)

    def save(self, index: int, model: torch.nn.Module, state: Any) -> None:
        """Store the state after stage `index`: the tensors that differ from the initial weights."""
        changed = {
            k: v.detach().cpu()
            for k, v in model.state_dict().items()
            if not torch.equal(v.detach().cpu(), self.initial[k])
        }
        best = None
        if state.best_state is not None:
            best = {k: v for k, v in state.best_state.items() if not torch.equal(v, self.initial[k])}
        entry = StageState(
            changed, best, state.step, state.best, state.best_step, capture_rng(), self.run_id,
            ", ".join(self.names[: index + 1]),
        )  # fmt: skip
        try:  # best effort: a full disk or an unreachable server must not fail a trial that trained
            if self.cache.store(
                self.keys[index], entry, {**self.description, "stages": self.names[: index + 1]}
            ):
                self.stored.append(index)
                if self.remote is not None:
                    self.remote.publish(self.keys[index], self.cache)
        except Exception as exc:
            self.problems.append(f"not stored after {self.names[index]}: {type(exc).__name__}: {exc}")
