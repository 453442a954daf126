"""`run-study --fresh` in MLflow: the study's earlier runs go, so that the new ones are not listed beside
look-alikes (three parents named `my_simcse (base)`, two `temperature=0.05 (trial 1)` of different
settings). They are deleted the way the MLflow UI deletes a run (soft: the UI's "Deleted" filter shows
and restores them until `mlflow gc` removes them for good)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.tracking.tracker import PARENT_TAG, ROLE_TAG, Tracker

if TYPE_CHECKING:
    from harness.resolve.study_spec import ResolvedStudy


def retire_runs(tracker: Tracker, study: ResolvedStudy, parent: str | None) -> tuple[int, int]:
    """Delete the replaced study's parent run (`parent`, from its Optuna study) and the earlier parents of
    the same study and profile that have ended (a `--fresh` before this one left them; one still RUNNING
    belongs to a coordinator elsewhere, and a study of the same name from another YAML file is not this
    one), with their trial runs; return (parents, trials) deleted."""
    experiment = tracker.experiment(study.name)
    if experiment is None:
        return 0, 0
    found = f"tags.`{ROLE_TAG}` = 'study' and tags.profile = '{study.profile}'"
    candidates = tracker.search_runs([experiment.experiment_id], found, max_results=10000)
    parents = [
        run
        for run in candidates
        if run.info.run_id == parent
        or run.info.status != "RUNNING"
        and run.data.tags.get("study.path", study.path) == study.path
    ]
    trials = 0
    for run in parents:
        children = tracker.search_runs(
            [experiment.experiment_id], f"tags.`{PARENT_TAG}` = '{run.info.run_id}'", max_results=50000
        )
        for child in children:
            tracker.delete_run(child.info.run_id)
        trials += len(children)
        tracker.delete_run(run.info.run_id)
    return len(parents), trials


def retired_line(study: str, profile: str, counts: tuple[int, int]) -> str:
    parents, trials = counts
    return (
        f"--fresh: deleted the earlier MLflow runs of {study} ({profile}): {parents} study run(s), {trials} "
        "trial run(s) (the UI's Deleted filter still shows and restores them until `mlflow gc`)"
    )
