"""A new local MLflow store (sqlite) starts as a copy of an empty store that MLflow itself created and
migrated, once per MLflow version and machine: MLflow runs its ~50 alembic migrations on every new
sqlite file (3 s on a 2-core CPU), for each new harness home, `harness eval` store and test.

The template lives in the user's cache (`HARNESS_CACHE_DIR`, else `$XDG_CACHE_HOME/harness`, else
`~/.cache/harness`), named by the MLflow version. The copy differs from a store MLflow creates in one
value, which is set as MLflow would set it: the artifact location of the Default experiment (id 0),
`<artifact root>/0` with the artifact root MLflow's client gives a sqlite store (the server's root when
set, else ./mlruns, resolved against the working directory). Where the cache cannot be written, MLflow
creates the store itself. Test: tests/tracking/test_store_template.py (every row of every table equal to a
store MLflow created, timestamps aside).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path


def cache_dir() -> Path:
    """Where per-machine caches go (not the harness home: every home shares them)."""
    if os.environ.get("HARNESS_CACHE_DIR"):
        return Path(os.environ["HARNESS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "harness"


def default_experiment_location() -> str:
    """The Default experiment's artifact location MLflow's client gives a new sqlite store here."""
    # the names MLflow's client reads (mlflow/tracking/_tracking_service/utils.py _get_sqlalchemy_store)
    from mlflow.store.tracking import DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH
    from mlflow.tracking._tracking_service.utils import _SERVER_ARTIFACT_ROOT_ENV_VAR
    from mlflow.utils.uri import append_to_uri_path, resolve_uri_if_local

    root = os.environ.get(_SERVER_ARTIFACT_ROOT_ENV_VAR, DEFAULT_LOCAL_FILE_AND_ARTIFACT_PATH)
    return append_to_uri_path(resolve_uri_if_local(root), "0")


def _template() -> Path | None:
    """The migrated empty store of this MLflow version, made once; None where the cache is not writable."""
    import mlflow
    from mlflow.tracking import MlflowClient

    path = cache_dir() / f"mlflow-{mlflow.__version__}-empty.db"
    if path.is_file():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        scratch.unlink(missing_ok=True)
        MlflowClient(f"sqlite:///{scratch}").search_experiments()  # MLflow creates and migrates it
        os.replace(scratch, path)
    except OSError:
        return None
    return path


def seed_sqlite_store(uri: str) -> None:
    """Before MLflow opens `uri`: a sqlite store that does not exist yet becomes a copy of the template.
    Two processes seeding the same store at once: the first link wins, the other copy is dropped."""
    if os.environ.get("MLFLOW_ENABLE_WORKSPACES", "").lower() in ("1", "true"):
        return  # a workspace-aware store: MLflow's own creation
    if not uri.startswith("sqlite:///"):
        return
    target = Path(uri.removeprefix("sqlite:///"))
    if target.exists() or not target.parent.is_dir():
        return
    template = _template()
    if template is None:
        return
    scratch = target.with_name(f".{target.name}.{os.getpid()}.seed")
    try:
        shutil.copyfile(template, scratch)
        with contextlib.closing(sqlite3.connect(scratch)) as db, db:
            db.execute(
                "UPDATE experiments SET artifact_location = ? WHERE experiment_id = 0",
                (default_experiment_location(),),
            )
        with contextlib.suppress(FileExistsError):
            os.link(scratch, target)
    except OSError:
        return  # MLflow creates the store itself
    finally:
        scratch.unlink(missing_ok=True)
