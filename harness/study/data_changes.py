"""Data that changed under a resumed study: its earlier trials recorded each data file they read with its
sha256 (harness.data.lineage, the artifact `data_files.json`); a resume that would read other bytes says
so in one line, since the study's trials would then mix two versions of their data."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from harness.data.lineage import fingerprint
from harness.tracking.tracker import LINEAGE_ARTIFACT, PARENT_TAG, Tracker


def recorded_files(tracker: Tracker, experiment: str, parent: str) -> list[dict]:
    """The data files the study's most recent finished trial read (none before any trial finished)."""
    runs = tracker.search_runs(
        [experiment],
        f"tags.`{PARENT_TAG}` = '{parent}' and attributes.status = 'FINISHED'",
        max_results=1,
        order_by=["attributes.end_time DESC"],
    )
    if not runs:
        return []
    with tempfile.TemporaryDirectory() as scratch:
        try:
            path = tracker.download(runs[0].info.run_id, LINEAGE_ARTIFACT, scratch)
        except Exception:  # noqa: BLE001 - a trial from before lineage was recorded: nothing to compare
            return []
        recorded = json.loads(path.read_text())
    return [row for rows in recorded.values() for row in rows]


def changed_data_line(tracker: Tracker, experiment: str, parent: str, data_dir: Path) -> str | None:
    """One line naming the data files whose bytes differ from what the earlier trials read, or None."""
    changed = []
    for row in {row["path"]: row for row in recorded_files(tracker, experiment, parent)}.values():
        path = Path(row["path"]) if Path(row["path"]).is_absolute() else data_dir / row["path"]
        now = str(fingerprint(path)["sha256"]) if path.is_file() else "missing"
        if now != row["sha256"]:
            changed.append(f"{row['path']} (sha256 {str(row['sha256'])[:8]} -> {now[:8]})")
    if not changed:
        return None
    more = f" and {len(changed) - 2} more" if len(changed) > 2 else ""
    return (
        f"data changed since this study's earlier trials: {', '.join(changed[:2])}{more}; its trials would "
        "mix two versions of the data: restore the files, or re-run with --fresh to start over"
    )
