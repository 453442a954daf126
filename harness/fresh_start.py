"""`run-study --fresh` in MLflow: the study's earlier runs go, so that the new ones are not listed beside
look-alikes (three parents named `my_simcse (base)`, two `temperature=0.05 (trial 1)` of different
settings). They are deleted the way the MLflow UI deletes a run (soft: the UI's "Deleted" filter shows
and restores them until `mlflow gc` removes them for good)."""

from __future__ import annotations

from mlflow.entities import ViewType

from harness.tracking import PARENT_TAG, ROLE_TAG, Tracker


def retire_runs(tracker: Tracker, study: str, profile: str) -> tuple[int, int]:
    """Delete every active parent run of `study` in `profile` and their trial runs; return (parents,
    trials) deleted."""
    experiment = tracker.client.get_experiment_by_name(study)
    if experiment is None:
        return 0, 0
    found = f"tags.`{ROLE_TAG}` = 'study' and tags.profile = '{profile}'"
    parents = tracker.client.search_runs(
        [experiment.experiment_id], found, run_view_type=ViewType.ACTIVE_ONLY, max_results=10000
    )
    trials = 0
    for parent in parents:
        children = tracker.client.search_runs(
            [experiment.experiment_id],
            f"tags.`{PARENT_TAG}` = '{parent.info.run_id}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=50000,
        )
        for child in children:
            tracker.client.delete_run(child.info.run_id)
        trials += len(children)
        tracker.client.delete_run(parent.info.run_id)
    return len(parents), trials


def retired_line(study: str, profile: str, counts: tuple[int, int]) -> str:
    parents, trials = counts
    return (
        f"--fresh: deleted the earlier MLflow runs of {study} ({profile}): {parents} study run(s), {trials} "
        "trial run(s) (the UI's Deleted filter still shows and restores them until `mlflow gc`)"
    )
