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

# where each study's YAML is, and what a derived study derives from (harness.resolve.derived; set by the
# runner)
STUDY_TAGS = """
SELECT e.name, t.key, t.value FROM experiment_tags t
JOIN experiments e ON e.experiment_id = t.experiment_id
WHERE (t.key IN ('study.path', 'derived_from', 'derived.changes') OR t.key LIKE 'study.trials.%')
  AND e.lifecycle_stage = 'active'
"""


def trials_tag(profile: str) -> str:
    """The experiment tag holding how many trials a profile of the study has (its last run's grid)."""
    return f"study.trials.{profile}"


def local_store(tracking_uri: str | None = None) -> Path | None:
    """The sqlite file behind --tracking-uri / MLFLOW_TRACKING_URI / the default store (mlflow.db in the
    home found here or above, harness.home), or None for a server or another database. The file may not
    exist: `harness.home.missing_store` says where it was looked for."""
    uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{harness_home() / 'mlflow.db'}"
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def finished_trials(store: Path) -> dict[str, dict[str, int]]:
    """{study: {profile: finished trial runs}} in a local store; empty when it does not exist yet."""
    counts: dict[str, dict[str, int]] = defaultdict(dict)
    for study, profile, count in _rows(store, FINISHED_TRIALS):
        counts[study][profile or "?"] = count
    return dict(counts)


def study_tags(store: Path) -> dict[str, dict[str, str]]:
    """{study: {tag: value}}: `study.path`, `derived_from`, `derived.changes` and `study.trials.<profile>`
    (trials_tag) of the studies that have them (studies run before the tags were set have none)."""
    tags: dict[str, dict[str, str]] = defaultdict(dict)
    for study, key, value in _rows(store, STUDY_TAGS):
        tags[study][key] = value
    return dict(tags)


def _rows(store: Path, query: str) -> list[tuple]:
    """The query's rows from a local store opened read-only; none when it does not exist yet."""
    if not store.is_file():
        return []
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=2) as db:
            return list(db.execute(query))
    except sqlite3.Error:  # another layout (a future MLflow) or a locked file: nothing to say
        return []
