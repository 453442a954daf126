"""What a local MLflow store holds, per study and profile, read with sqlite3 alone: `harness studies`
answers at once (importing mlflow takes seconds). Only sqlite stores are read; others are not checked."""

from __future__ import annotations

import os
import sqlite3
from collections import defaultdict
from pathlib import Path

from harness.home import harness_home

# finished trial runs (harness.role = trial) per experiment (the study's name) and `profile` tag
FINISHED_TRIALS = """
SELECT e.name, p.value, count(*) FROM runs r
JOIN experiments e ON e.experiment_id = r.experiment_id
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'harness.role' AND role.value = 'trial'
LEFT JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = 'profile'
WHERE r.status = 'FINISHED' AND r.lifecycle_stage = 'active' AND e.lifecycle_stage = 'active'
GROUP BY e.name, p.value
"""


def local_store(tracking_uri: str | None = None) -> Path | None:
    """The sqlite file behind --tracking-uri / MLFLOW_TRACKING_URI / the default store (mlflow.db in the
    home found here or above, harness.home), or None for a server or another database. The file may not
    exist: `harness.home.missing_store` says where it was looked for."""
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{harness_home() / 'mlflow.db'}"
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def finished_trials(store: Path) -> dict[str, dict[str, int]]:
    """{study: {profile: finished trial runs}} in a local store; empty when it does not exist yet."""
    if not store.is_file():
        return {}
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=2) as db:
            for study, profile, count in db.execute(FINISHED_TRIALS):
                counts[study][profile or "?"] = count
    except sqlite3.Error:  # another layout (a future MLflow) or a locked file: nothing to say
        return {}
    return dict(counts)
