"""MLflow -> pandas: the finished trials of a study's latest parent run, one row per configuration."""

from __future__ import annotations

from typing import Any

import pandas as pd

from harness.errors import HarnessError
from harness.metric_names import history, metrics_of
from harness.tracking import PARENT_TAG, ROLE_TAG, Tracker


def latest_parent(tracker: Tracker, study: str, profile: str | None = None):  # noqa: ANN201
    """The most recently started parent run of `study` (optionally of one profile)."""
    experiment = tracker.client.get_experiment_by_name(study)
    if experiment is None:
        raise HarnessError(
            f"no MLflow experiment {study!r} at {tracker.uri}; run `harness run-study {study}` first"
        )
    query = f"tags.`{ROLE_TAG}` = 'study'"
    if profile:
        query += f" and tags.profile = '{profile}'"
    runs = tracker.client.search_runs(
        [experiment.experiment_id], query, order_by=["attributes.start_time DESC"], max_results=1
    )
    if not runs:
        raise HarnessError(
            f"experiment {study!r} has no study run{' for profile ' + profile if profile else ''}"
        )
    return runs[0]


def trial_frame(tracker: Tracker, study: str, profile: str | None = None) -> tuple[pd.DataFrame, object]:
    """FINISHED child runs of the latest parent: columns `run_id`, `trial`, every param, every metric.

    When a configuration ran more than once (a retried trial), the latest finished run is kept.
    """
    parent = latest_parent(tracker, study, profile)
    children = tracker.client.search_runs(
        [parent.info.experiment_id],
        f"tags.`{PARENT_TAG}` = '{parent.info.run_id}' and attributes.status = 'FINISHED'",
        order_by=["attributes.start_time ASC"],
        max_results=50000,
    )
    if not children:
        raise HarnessError(f"study {study!r} has no finished trials yet; run or resume it first")
    rows = []
    for run in children:
        row: dict[str, object] = {"run_id": run.info.run_id, "trial": int(run.data.tags.get("trial", -1))}
        row.update({k: _number(v) for k, v in run.data.params.items()})
        row.update(metrics_of(run))
        rows.append(row)
    frame = pd.DataFrame(rows)
    params = [c for c in children[0].data.params if c in frame.columns]
    frame = frame.drop_duplicates(subset=params, keep="last").sort_values("trial").reset_index(drop=True)
    return frame, parent


def unfinished_trials(tracker: Tracker, parent: object) -> list[str]:
    """One line per child run of `parent` that did not finish (skipped, failed, killed): its variant or
    trial number and its `error` tag, so a report says which rows are missing and why."""
    runs = tracker.client.search_runs(
        [parent.info.experiment_id],  # type: ignore[attr-defined]
        f"tags.`{PARENT_TAG}` = '{parent.info.run_id}' and attributes.status != 'FINISHED'",  # type: ignore[attr-defined]
        order_by=["attributes.start_time ASC"],
        max_results=1000,
    )
    lines = []
    for run in runs:
        name = run.data.tags.get("variant") or f"trial {run.data.tags.get('trial', '?')}"
        lines.append(f"{name} ({run.info.status}): {run.data.tags.get('error', 'no reason recorded')}")
    return lines


def _number(text: str) -> object:
    """MLflow params are strings; give numbers back their type so they sort and pivot."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def histories(tracker: Tracker, run_ids: list[str], metric: str) -> dict[str, dict[int, float]]:
    """step -> value of `metric` per run, the first value logged at each step (a trial logs its final
    scores at its last step after the evaluation there)."""
    out: dict[str, dict[int, float]] = {}
    for run_id in run_ids:
        points: dict[int, float] = {}
        for m in sorted(history(tracker.client, run_id, metric), key=lambda m: (m.step, m.timestamp)):
            points.setdefault(m.step, m.value)
        out[run_id] = points
    return out


def row_labels(frame: pd.DataFrame, template: str, where: str) -> list[str]:
    """Each run's label from a spec's template over its params (`{variant}`, `lambda{lambda}`)."""
    try:
        return [template.format(**row) for row in frame.to_dict("records")]
    except KeyError as exc:
        raise HarnessError(f"{where}: label uses {exc}, which is not a param of the runs") from None


def labelled_runs(frame: pd.DataFrame, template: str, wanted: list[str], where: str) -> dict[str, str]:
    """label -> run_id for the `wanted` labels, in their order; a label no run has is refused."""
    ids = dict(zip(row_labels(frame, template, where), frame["run_id"], strict=True))
    missing = [label for label in wanted if label not in ids]
    if missing:
        raise HarnessError(f"{where}: no run labelled {missing}; fix reports/<study>.yaml")
    return {label: ids[label] for label in wanted}


def require_columns(frame: pd.DataFrame, columns: list[str], part: str) -> None:
    """One line when the runs lack a metric or parameter a report part names (`part`: "table x",
    "figure y"): every table and figure checks through here."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise HarnessError(
            f"{part}: the runs have no {', '.join(missing)} (their profile does not evaluate it, or a name "
            "in reports/<study>.yaml is wrong)"
        )


def filter_runs(frame: pd.DataFrame, where: dict[str, Any], name: str) -> pd.DataFrame:
    """The runs whose params match `where` (param -> value, or a list of accepted values); numbers match
    numerically (MLflow gives 1 back for a logged 1.0). No run left is an error naming the filter."""
    if not where:
        return frame
    keep = pd.Series(True, index=frame.index)
    for param, wanted in where.items():
        if param not in frame.columns:
            raise HarnessError(f"{name}: 'where' names {param!r}, which is not a param of the runs")
        accepted = wanted if isinstance(wanted, list) else [wanted]
        keep &= frame[param].map(lambda value, ok=accepted: any(_same(value, a) for a in ok))
    if not keep.any():
        raise HarnessError(f"{name}: no run has {where}; fix 'where' in reports/<study>.yaml")
    return frame[keep].reset_index(drop=True)


def _same(value: object, wanted: object) -> bool:
    if isinstance(value, int | float) and isinstance(wanted, int | float) and not isinstance(wanted, bool):
        return float(value) == float(wanted)
    return str(value) == str(wanted)
