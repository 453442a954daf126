"""`ensemble`: no training. For each task, take the `top_k` runs of `source_study` (one study, or several
whose runs are pooled: Chen's ensemble draws a member from Table 4's runs beside Table 2's) with the best
dev score on that task (from MLflow), average their saved dev predictions (class / paraphrase
probabilities, STS scores) and score the result (Chen 5, David et al.: the best model per task)."""

from __future__ import annotations

import json
import tempfile
from typing import TYPE_CHECKING, Any

from pydantic import Field

from harness.data.cs224n import MultitaskData
from harness.errors import HarnessError
from harness.fields import Strict
from harness.methods.base import DataSources, Method
from harness.registry import register_method
from harness.scoring.multitask import SINGLE_TASK_SCORE
from harness.train.combiners import TASKS

if TYPE_CHECKING:
    from harness.tracking.tracker import Tracker


class EnsembleParams(Strict):
    source_study: str | list[str] = Field(
        description="the MLflow experiment (study) whose trials are combined, or a list of them (pooled)"
    )
    source_profile: str | None = None
    top_k: int = Field(1, gt=0, description="runs averaged per task")

    @property
    def studies(self) -> list[str]:
        """The source studies, as a list."""
        return [self.source_study] if isinstance(self.source_study, str) else list(self.source_study)


def choose_runs(
    tracker: Tracker, source_study: str | list[str], profile: str | None, top_k: int
) -> dict[str, list[tuple[str, dict]]]:
    """task -> [(run id, its dev predictions)] for the top_k runs on that task's dev score, over the runs
    of every source study."""
    import pandas as pd

    from harness.tracking.study_runs import trial_frame  # MLflow is imported only where an ensemble runs

    studies = [source_study] if isinstance(source_study, str) else list(source_study)
    frame = pd.concat([trial_frame(tracker, study, profile)[0] for study in studies], ignore_index=True)
    chosen: dict[str, list[tuple[str, dict]]] = {}
    for task in TASKS:
        metric = f"dev.{SINGLE_TASK_SCORE[task]}"
        if metric not in frame.columns or frame[metric].isna().all():
            raise HarnessError(f"ensemble: {' and '.join(map(repr, studies))} have no runs with {metric}")
        best = frame.dropna(subset=[metric]).nlargest(top_k, metric)
        chosen[task] = [(run_id, _predictions(tracker, run_id)) for run_id in best["run_id"]]
    return chosen


def _predictions(tracker: Tracker, run_id: str) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        return json.loads(tracker.download(run_id, "results.json", folder).read_text())["predictions"]


@register_method("ensemble")
class Ensemble(Method):
    Params = EnsembleParams
    scorer = "ensemble"
    needs_encoder = False
    trains = False
    model = "ensemble"

    @classmethod
    def needs(cls, run: Any, sources: DataSources) -> list[str]:
        """The source study's finished runs, read from a local store without MLflow."""
        from harness.tracking.store_index import finished_trials, local_store

        p = run.params
        store = local_store(sources.tracking_uri)
        if store is None:
            return [f"finished runs of {study} in the tracking store" for study in p.studies]
        finished = finished_trials(store)
        profile = f" --profile {p.source_profile}" if p.source_profile else ""
        missing = []
        for study in p.studies:
            done = finished.get(study, {})
            if (done.get(p.source_profile, 0) if p.source_profile else sum(done.values())) == 0:
                missing.append(f"finished runs of {study}: run `harness run-study {study}{profile}` first")
        return missing

    @classmethod
    def scored_tasks(cls, params: Any, stages: tuple[Any, ...]) -> tuple[str, ...]:
        return TASKS

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> tuple[MultitaskData, dict]:
        from harness.tracking.tracker import Tracker  # MLflow is imported only where an ensemble runs

        p = run.params
        chosen = choose_runs(Tracker(sources.tracking_uri), p.source_study, p.source_profile, p.top_k)
        return cls.sources(run, sources.data_dir).tasks(), chosen
