"""A study's runs as MLflow holds them: its latest parent run, the finished trials under it as a pandas
frame (one row per configuration, params and final metrics), the trials that did not finish, and metric
histories. Read by the report, `harness export` and the ensemble method (which combines a study's best
runs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from harness.errors import HarnessError, did_you_mean, mask_password
from harness.home import STUDIES_DIR
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import PARENT_TAG, ROLE_TAG, Tracker

if TYPE_CHECKING:
    from mlflow.entities import Run


def latest_parent(tracker: Tracker, study: str, profile: str | None = None) -> Run:
    """The most recently started parent run of `study` (optionally of one profile)."""
    experiment = tracker.experiment(study)
    if experiment is None:
        fix = _no_experiment_fix(tracker, study)
        raise HarnessError(f"no MLflow experiment {study!r} at {mask_password(tracker.uri)}; {fix}")
    query = f"tags.`{ROLE_TAG}` = 'study'"
    if profile:
        query += f" and tags.profile = '{profile}'"
    runs = tracker.search_runs(
        [experiment.experiment_id], query, order_by=["attributes.start_time DESC"], max_results=1
    )
    if not runs:
        raise HarnessError(
            f"experiment {study!r} has no study run{' for profile ' + profile if profile else ''}"
            + _profiles_with_runs(tracker, experiment.experiment_id, study)
        )
    return runs[0]


def _profiles_with_runs(tracker: Tracker, experiment_id: str, study: str) -> str:
    """'; its runs are of profile smoke: `harness report S --profile smoke`', or '' when it has none."""
    parents = tracker.search_runs([experiment_id], f"tags.`{ROLE_TAG}` = 'study'", max_results=1000)
    profiles = sorted({run.data.tags.get("profile", "") for run in parents} - {""})
    if not profiles:
        return f"; run `harness run-study {study}` first"
    named = " or ".join(f"`harness report {study} --profile {p}`" for p in profiles)
    return f"; its runs are of profile {', '.join(profiles)}: {named}"


def _no_experiment_fix(tracker: Tracker, study: str) -> str:
    """What to do about a study name the store lacks: run it where a study file has that name (in studies/
    or here), else the close names among the store's experiments and the study files."""
    if (STUDIES_DIR / f"{study}.yaml").is_file():
        return f"run `harness run-study {study}` first"
    if Path(f"{study}.yaml").is_file():
        return f"run `harness run-study {study}.yaml` first"
    stored = sorted(e.name for e in tracker.experiments() if e.name != "Default")
    files = [path.stem for path in sorted(STUDIES_DIR.glob("*.yaml"))]
    otherwise = "the store has no study runs yet; run one with `harness run-study STUDY`"
    if stored:
        otherwise = f"studies with runs here: {', '.join(stored)}"
    return did_you_mean(study, list(dict.fromkeys([*stored, *files])), otherwise, cutoff=0.6)


RAN_AS = "precision_ran"  # the column of the precision a trial ran in (its tag), beside the asked one


def trial_frame(tracker: Tracker, study: str, profile: str | None = None) -> tuple[pd.DataFrame, Run]:
    """FINISHED child runs of the latest parent: columns `run_id`, `trial`, every param, the precision it
    ran in (RAN_AS), every metric.

    When a configuration ran more than once (a retried trial), the latest finished run is kept.
    """
    parent = latest_parent(tracker, study, profile)
    children = tracker.search_runs(
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
        if "precision" in run.data.tags:  # what `precision: auto` resolved to on the trial's device
            row[RAN_AS] = run.data.tags["precision"]
        row.update(metrics_of(run))
        rows.append(row)
    frame = pd.DataFrame(rows)
    params = [c for c in children[0].data.params if c in frame.columns]
    frame = frame.drop_duplicates(subset=params, keep="last").sort_values("trial").reset_index(drop=True)
    return frame, parent


def unfinished_trials(tracker: Tracker, parent: object) -> list[str]:
    """One line per child run of `parent` that did not finish (skipped, failed, killed): its variant or
    trial number and its `error` tag, so a report says which rows are missing and why."""
    runs = tracker.search_runs(
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
        for m in sorted(tracker.history(run_id, metric), key=lambda m: (m.step, m.timestamp)):
            points.setdefault(m.step, m.value)
        out[run_id] = points
    return out
