"""Everything MLflow: where runs go, the study's parent run, one nested child run per trial.

Uses `MlflowClient` with explicit run ids (no fluent global state), so several worker processes can log
children of one parent run safely. Default store: sqlite under `.harness/` with local artifacts.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from mlflow.entities import Metric, Param
from mlflow.tracking import MlflowClient

from harness.errors import ServiceUnavailable, tracking_unreachable
from harness.home import harness_home
from harness.places import check_reachable, require_store, resolve_tracking_uri  # noqa: F401 (re-exported)
from harness.tracking.metric_names import OBJECTIVE, check_declared, history, logged
from harness.tracking.steady_client import SteadyClient
from harness.tracking.store_template import seed_sqlite_store

# MLflow draws a progress bar for every artifact download (a run's record, a logged study file): carriage
# returns in a log file and noise on a terminal, for files of a few KB
os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")

logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)  # "Creating initial ... tables"
logging.getLogger("alembic").setLevel(logging.WARNING)

PARENT_TAG = "mlflow.parentRunId"
ROLE_TAG = "harness.role"
OBJECTIVES_TAG = (
    "objectives"  # a multi-objective study's parent run: `objective maximize, MR.devacc maximize`
)
LINEAGE_ARTIFACT = "data_files.json"  # the data files a run read (LoggedRun.log_lineage)
NOTE_TAG = "mlflow.note.content"  # the description the UI shows on an experiment's or a run's page
# The kind an experiment is for (values as the UI names them, mlflow/server/js: "mlflow.experimentKind").
# MLflow 3.17's UI no longer opens an experiment in the view of its kind: with its workflow switch on (it
# always is), it takes the kind from the view (TRAINING_VIEW below), not from this tag. Set for clients that
# read it, and for the UI's own kind selector.
KIND_TAG, MODEL_TRAINING = "mlflow.experimentKind", "custom_model_development"


UI = "http://127.0.0.1:5000"  # where `harness ui` serves a local store
# The UI opens every page, a run's and the compare page included, in its GenAI view (breadcrumb
# "Evaluations", Judges, Prompts) unless the URL says otherwise: MLflow 3.17 reads the view from the
# `workflowType` query parameter, else from localStorage `mlflow.workflowType_v1` (written only when the
# user flips the GenAI / Model training switch), else "genai". Every link the harness prints carries it.
TRAINING_VIEW = "workflowType=machine_learning"
# A saved view of an experiment's runs page (MLflow 3.17, its "Views" menu): the experiment tag
# `mlflow.sharedViewState.<id>` holds {"name", "createdAt", "updatedAt", "state"}, `state` the page's
# search facets and table layout as JSON; the URL key `viewStateShareKey=<id>` opens it. The page applies
# it only when the URL carries none of its search facets (searchFilter, orderByKey, orderByAsc, startTime,
# lifecycleFilter, modelVersionFilter, datasetsFilter): the sort goes into the view, not the URL.
# A view cannot pin a run: the page drops runsPinned (and runsExpanded, runsHidden) from a shared view's
# state, so the parent run goes first by the sort, not by a pin.
VIEW_TAG = "mlflow.sharedViewState."
RUNS_VIEW = "harness"  # the id of the view `Tracker.experiment_id` saves on every experiment it opens
RUNS_VIEW_NAME = "Study by configuration (harness)"
BY_OBJECTIVE = f"metrics.`{OBJECTIVE}`"  # the UI's key of the objective's column
BY_START = "attributes.start_time"  # the UI's key of the start-time sort
# Every run of a study is tagged with its configuration: a trial's searched values without the seed, so
# the view groups the seeds of one configuration into one row (the UI's "Group by", their mean); the parent
# run is its own group, PARENT_GROUP.
CONFIG_TAG, PARENT_GROUP = "harness.config", "the study (parent run)"


def configuration(values: dict[str, Any]) -> str:
    """A trial's configuration: its searched values but the seed (`lambda=0.1 tau=1.0`), or `base` where
    the seed is all it searches."""
    return " ".join(f"{key}={value}" for key, value in values.items() if key != "seed") or "base"


def experiment_url(uri: str, experiment_id: str) -> str:
    """The experiment's runs in the UI's model-training view, through its saved view (`runs_view`: the
    parent run first, then one row per configuration with its seeds under it): the server's own address
    for an http(s) tracking URI, else `harness ui`'s."""
    base = uri.rstrip("/") if uri.startswith(("http://", "https://")) else UI
    return f"{base}/#/experiments/{experiment_id}/runs?{TRAINING_VIEW}&viewStateShareKey={RUNS_VIEW}"


def runs_view(searched: Sequence[str] = (), finals: Sequence[str] = ()) -> dict[str, Any]:
    """The runs page's state in the harness's saved view: a column per searched param, then the objective,
    then the final scores the study is read by (`finals`: harness names); the runs grouped by their
    configuration (CONFIG_TAG: the seeds of one configuration in one group, whose row shows their mean) in
    the order they started, so the parent run, which starts first, is the first row (a click on the
    objective's header ranks the groups by their mean). Keys of MLflow 3.17's experiment page state;
    unnamed ones keep their defaults; the UI always shows run name, start time and duration."""
    columns = [f"params.`{name}`" for name in dict.fromkeys(searched)] + [BY_OBJECTIVE]
    columns += [f"metrics.`{logged(name)}`" for name in finals if name != OBJECTIVE]
    grouped = {"groupByKeys": [{"mode": "tag", "groupByData": CONFIG_TAG}], "aggregateFunction": "average"}
    return {"orderByKey": BY_START, "orderByAsc": True, "selectedColumns": columns, "groupBy": grouped}


def _view_envelope(state: dict[str, Any], created: int, updated: int) -> str:
    return json.dumps({"name": RUNS_VIEW_NAME, "createdAt": created, "updatedAt": updated,
                       "state": json.dumps(state)})  # fmt: skip


def saved_view(tags: dict[str, str]) -> tuple[dict[str, Any], int] | None:
    """The harness's saved view among an experiment's tags: its state and creation time (None: none, or
    not one the UI reads)."""
    try:
        envelope = json.loads(tags[VIEW_TAG + RUNS_VIEW])
        return json.loads(envelope["state"]), int(envelope["createdAt"])
    except (KeyError, TypeError, ValueError):
        return None


def default_artifact_root() -> Path:
    return harness_home() / "mlartifacts"


@functools.cache
def git_commit() -> str:
    """The harness checkout's commit, or 'unknown' outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 else "unknown"


def _duplicate_key(exc: BaseException) -> bool:
    """A unique-key violation from the store (SQLite's or PostgreSQL's words)."""
    text = str(exc)
    return "UNIQUE constraint failed" in text or "duplicate key value" in text


def objectives_tag(objectives: Sequence[Any]) -> str:
    """A multi-objective study's objectives as its parent run's tag: `metric direction, ...`."""
    return ", ".join(f"{o.metric} {o.direction}" for o in objectives)


def objectives_of(tags: dict[str, str]) -> list[tuple[str, str]]:
    """(metric, direction) of each objective a parent run's tags name (none for one objective)."""
    text = tags.get(OBJECTIVES_TAG, "")
    return [tuple(item.rsplit(" ", 1)) for item in text.split(", ")] if text else []  # type: ignore[misc]


VERSIONED = ("torch", "transformers", "sentence-transformers", "mlflow", "optuna", "numpy", "scikit-learn")


@functools.cache
def package_versions() -> str:
    """`python 3.11.9, torch 2.13.0, ...`: what a run ran with (the packages that shape its numbers)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    found = [f"python {platform.python_version()}"]
    for name in VERSIONED:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(found)


def tracking_outage(exc: BaseException) -> ServiceUnavailable | None:
    """An MLflow client error that means the server stayed away past MLflow's own retries (7, ~4 min:
    MLFLOW_HTTP_REQUEST_MAX_RETRIES), as the stop it is; None for any other error."""
    unreachable = tracking_unreachable(exc)
    if unreachable is None:
        return None
    return ServiceUnavailable(
        f"MLflow tracking server unreachable ({unreachable}); this process's trials go back to the queue: "
        "re-run the same command once it is back",
        "tracking",
    )


class Tracker:
    """A tracking store plus the operations the study runner and the report need: the harness's one door
    to MLflow (modules outside harness/tracking/ call these, never `client`; tests/test_imports.py checks)."""

    def __init__(self, uri: str | None = None) -> None:
        self.uri = resolve_tracking_uri(uri)
        seed_sqlite_store(self.uri)  # a new local store: a copy of one MLflow migrated once (3 s -> ms)
        # each call tried again while a tracking server's database is busy (harness.tracking.steady_client)
        self.client = cast(MlflowClient, SteadyClient(MlflowClient(tracking_uri=self.uri)))

    def experiment_id(
        self,
        name: str,
        description: str = "",
        searched: Sequence[str] | None = None,
        finals: Sequence[str] = (),
    ) -> str:
        """The experiment named `name`, created on first use (artifacts under .harness/ for sqlite), a
        model-training experiment for the UI, with `description` as its note where one is given, and the
        saved view `experiment_url` opens: `searched` (a study's searched params) as its columns where
        given, else the columns it has (the objective alone on a new experiment)."""
        tags = {KIND_TAG: MODEL_TRAINING, **({NOTE_TAG: description} if description else {})}
        experiment = self.client.get_experiment_by_name(name)
        if experiment is None:
            location = None
            if self.uri.startswith("sqlite:"):
                location = (default_artifact_root() / name).as_uri()
            tags |= self._view_tag({}, searched, finals)
            return self.client.create_experiment(name, artifact_location=location, tags=tags)
        if experiment.lifecycle_stage == "deleted":
            self.client.restore_experiment(experiment.experiment_id)
        for key, value in {**tags, **self._view_tag(experiment.tags, searched, finals)}.items():
            if experiment.tags.get(key) != value:
                self.client.set_experiment_tag(experiment.experiment_id, key, value)
        return experiment.experiment_id

    @staticmethod
    def _view_tag(
        tags: dict[str, str], searched: Sequence[str] | None, finals: Sequence[str]
    ) -> dict[str, str]:
        """The saved-view tag to set: none where the experiment's view already has these columns."""
        old = saved_view(tags)
        if old is not None and (searched is None or old[0] == runs_view(searched, finals)):
            return {}
        now = int(time.time() * 1000)
        state = runs_view(searched or (), finals)
        return {VIEW_TAG + RUNS_VIEW: _view_envelope(state, old[1] if old else now, now)}

    def open_parent(self, experiment_id: str, run_id: str | None, name: str, tags: dict[str, str]) -> str:
        """Reuse the study's parent run when it still exists (resume), else start a new one."""
        if run_id:
            try:
                run = self.client.get_run(run_id)
            except Exception:
                run = None
            if run is not None and run.info.lifecycle_stage == "active":
                self.client.update_run(run_id, status="RUNNING")
                if "outcome" in run.data.tags:  # the interruption it records is over
                    self.client.delete_tag(run_id, "outcome")
                return run_id
        run = self.client.create_run(experiment_id, run_name=name, tags={**tags, ROLE_TAG: "study"})
        return run.info.run_id

    def start_run(self, experiment_id: str, name: str, tags: dict[str, str]) -> LoggedRun:
        run = self.client.create_run(experiment_id, run_name=name, tags=tags)
        return LoggedRun(self.client, run.info.run_id)

    def start_child(self, experiment_id: str, parent_id: str, name: str, tags: dict[str, str]) -> LoggedRun:
        return self.start_run(experiment_id, name, {**tags, PARENT_TAG: parent_id, ROLE_TAG: "trial"})

    def finish(self, run_id: str, status: str, error: str | None = None) -> None:
        """End the run `run_id` with `status`; `error`, where given, is its one-line reason (`error` tag)."""
        self.run(run_id).finish(status, error)

    def run(self, run_id: str) -> LoggedRun:
        """An existing run, to log to."""
        return LoggedRun(self.client, run_id)

    def get_run(self, run_id: str) -> Any:
        return self.client.get_run(run_id)

    def experiment(self, name: str) -> Any:
        """The experiment named `name`, or None."""
        return self.client.get_experiment_by_name(name)

    def experiments(self, filter_string: str | None = None) -> list:
        """The store's experiments (MLflow's first page: 1000), those matching `filter_string` if given."""
        return list(self.client.search_experiments(filter_string=filter_string))

    def search_runs(
        self,
        experiment_ids: Sequence[str],
        filter_string: str = "",
        max_results: int = 1000,
        order_by: Sequence[str] | None = None,
    ) -> list:
        """Active runs of the experiments matching `filter_string` (MLflow's search syntax), in `order_by`."""
        found = self.client.search_runs(
            list(experiment_ids),
            filter_string,
            max_results=max_results,
            order_by=list(order_by) if order_by else None,
        )
        return list(found)

    def download(self, run_id: str, artifact: str, folder: str | Path) -> Path:
        """The run's artifact (a file or a folder) downloaded into `folder`; MLflow's error if it has none."""
        return Path(self.client.download_artifacts(run_id, artifact, str(folder)))

    def upload(self, run_id: str, folder: Path, artifact_path: str) -> None:
        self.client.log_artifacts(run_id, str(folder), artifact_path)

    def history(self, run_id: str, name: str) -> list:
        """Every logged point of the harness metric `name` (under its current stored name or an older one)."""
        return history(self.client, run_id, name)

    def stored_history(self, run_id: str, stored: str) -> list:
        """Every logged point of the metric stored as `stored`."""
        return self.client.get_metric_history(run_id, stored)

    def delete_run(self, run_id: str) -> None:
        self.client.delete_run(run_id)

    def tag_experiment(self, experiment_id: str, key: str, value: str) -> None:
        self.client.set_experiment_tag(experiment_id, key, value)

    def withdraw(self, run_id: str, reason: str) -> bool:
        """A FINISHED run whose result no longer counts ends KILLED with `reason` as its `error` tag; a run
        in any other state is left as it is. Whether it was withdrawn."""
        if self.client.get_run(run_id).info.status != "FINISHED":
            return False
        self.client.set_tag(run_id, "error", reason)
        self.finish(run_id, "KILLED")
        return True

    def log_metrics(self, run_id: str, metrics: dict[str, float], step: int = 0) -> None:
        LoggedRun(self.client, run_id).log_metrics(metrics, step)

    def trial_children(self, experiment_id: str, parent_id: str, trial: int) -> list:
        """The parent's child runs of trial number `trial`, whatever their status."""
        query = f"tags.`{PARENT_TAG}` = '{parent_id}' and tags.trial = '{trial}'"
        return self.client.search_runs([experiment_id], query)

    def running_children(self, experiment_id: str, parent_id: str) -> list:
        """The parent's child runs still RUNNING."""
        query = f"tags.`{PARENT_TAG}` = '{parent_id}' and attributes.status = 'RUNNING'"
        return self.client.search_runs([experiment_id], query)

    def kill_orphans(self, experiment_id: str, parent_id: str) -> int:
        """Mark child runs left RUNNING by a process that is gone as KILLED; return how many."""
        from harness.processes import worker_alive

        runs = [
            r
            for r in self.running_children(experiment_id, parent_id)
            if not worker_alive(r.data.tags.get("worker", ""))
        ]
        for run in runs:
            self.client.set_tag(run.info.run_id, "error", "worker process died; the trial is run again")
            self.client.set_terminated(run.info.run_id, status="KILLED")
        return len(runs)


class LoggedRun:
    """One run's logging, buffered so that step metrics cost one store write per flush."""

    def __init__(self, client: MlflowClient, run_id: str) -> None:
        self.client = client
        self.run_id = run_id
        self._pending: list[Metric] = []

    def log_params(self, params: dict[str, Any]) -> None:
        items = [Param(k, str(v)) for k, v in params.items()]
        for start in range(0, len(items), 100):
            self.client.log_batch(self.run_id, params=items[start : start + 100])

    def log_metrics(self, metrics: dict[str, float], step: int = 0, flush: bool = True) -> None:
        check_declared(metrics)
        now = int(time.time() * 1000)
        self._pending += [
            Metric(logged(k), float(v), now, step) for k, v in metrics.items() if math.isfinite(v)
        ]
        if flush:
            self.flush()

    def flush(self) -> None:
        # the objective first: the store keeps a run's metrics in the order they were first logged, and the
        # UI's compare page opens its parallel-coordinates chart on the first one the runs share
        self._pending.sort(key=lambda metric: metric.key != OBJECTIVE)
        while self._pending:
            batch, self._pending = self._pending[:1000], self._pending[1000:]
            self.client.log_batch(self.run_id, metrics=batch)

    def log_text(self, text: str, artifact_file: str) -> None:
        self.client.log_text(self.run_id, text, artifact_file)

    def log_array(self, array: Any, artifact_file: str) -> None:
        """A numpy array as an .npy artifact (read back with `np.load(..., allow_pickle=False)`)."""
        import numpy as np

        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / artifact_file
            np.save(path, array, allow_pickle=False)
            self.client.log_artifact(self.run_id, str(path))

    def log_items(self, frame: Any) -> None:
        """A final evaluation's per-item record (a DataFrame, harness.stats.items) as the artifact
        `items.parquet`: written whole into a scratch folder, then uploaded, so the run never holds part
        of one (read back with `read_items`)."""
        from harness.stats.items import ARTIFACT, write_items

        with tempfile.TemporaryDirectory() as scratch:
            self.client.log_artifact(self.run_id, str(write_items(frame, Path(scratch) / ARTIFACT)))

    def log_resamples(self, scores: Any, resampler: Any) -> None:
        """A run's item resamples (harness.stats.resample) as the artifact `resamples.npz`, which
        the report reads instead of recomputing them; written whole, then uploaded."""
        from harness.stats.resample import RESAMPLES_ARTIFACT, write_resamples

        with tempfile.TemporaryDirectory() as scratch:
            path = write_resamples(scores, resampler, Path(scratch) / RESAMPLES_ARTIFACT)
            self.client.log_artifact(self.run_id, str(path))

    def log_lineage(self, lineage: dict[str, list[dict[str, Any]]]) -> None:
        """The data files a run read, by context (`training`, `evaluation`; harness.data.lineage): the
        artifact `data_files.json` (each file's path, bytes and sha256), and each folder of them as an
        MLflow dataset input with that context (the UI's Dataset column: name, digest over its files)."""
        from mlflow.entities import Dataset, DatasetInput, InputTag
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        self.log_text(json.dumps(lineage, indent=2), LINEAGE_ARTIFACT)
        inputs = []
        for context, rows in lineage.items():
            folders: dict[str, list[dict[str, Any]]] = {}
            for row in rows:
                folders.setdefault(str(Path(row["path"]).parent), []).append(row)
            for folder, members in sorted(folders.items()):
                digest = hashlib.sha256("".join(str(m["sha256"]) for m in members).encode()).hexdigest()[:10]
                profile = json.dumps({"files": len(members), "bytes": sum(int(m["bytes"]) for m in members)})
                dataset = Dataset(folder, digest, "local", json.dumps({"uri": folder}), profile=profile)
                inputs.append(DatasetInput(dataset, [InputTag(MLFLOW_DATASET_CONTEXT, context)]))
        for attempt in range(1, 4):  # workers of one study register the same dataset at the same moment:
            try:  # MLflow's get-or-create of a dataset then fails in the second with a unique-key error
                if inputs:
                    self.client.log_inputs(self.run_id, datasets=inputs)
                return
            except Exception as exc:  # noqa: BLE001 - MlflowException wrapping the store's IntegrityError
                if attempt == 3 or not _duplicate_key(exc):
                    raise
                time.sleep(0.2 * attempt)  # the other worker's dataset is then there to be found

    def set_tag(self, key: str, value: str) -> None:
        self.client.set_tag(self.run_id, key, value)

    def log_folder(self, folder: Path, artifact_path: str) -> None:
        self.client.log_artifacts(self.run_id, str(folder), artifact_path)

    def finish_unless_ended(self, status: str, error: str) -> None:
        """`finish`, unless someone else ended the run already (its status and reason then stand)."""
        if self.client.get_run(self.run_id).info.status == "RUNNING":
            self.finish(status, error)

    def finish(self, status: str = "FINISHED", error: str | None = None) -> None:
        """End the run; a failure records its one-line reason as the `error` tag."""
        try:
            self.flush()
            if error:
                self.client.set_tag(self.run_id, "error", error[:4000])
        finally:
            self.client.set_terminated(self.run_id, status=status)
