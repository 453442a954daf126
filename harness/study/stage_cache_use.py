"""A trial's use of the stage cache (harness.train.stage_cache): its keys, and what the MLflow run says
about it (`stage_cache.reused` with `stage_cache.source_run`, `stage_cache.stored`). The reused stages'
logged metrics are copied from the run that trained them, so the trial's curves are whole."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

import torch

from harness.encoders.encoder import resolve_model_name
from harness.resolve.run_spec import ResolvedRun
from harness.tracking.metric_names import canonical
from harness.tracking.tracker import LoggedRun, Tracker
from harness.train.stage_cache import CachedStages, StageCache
from harness.train.stage_keys import model_identity, stage_keys


def cached_stages(
    run_spec: ResolvedRun,
    method: Any,
    data_dir: Path,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    run: LoggedRun,
    tracker: Tracker,
) -> CachedStages | None:
    """The trial's cache plan, or None (with a tag saying why) for a method without cacheable stages."""
    config = run_spec.settings
    described = method.stage_descriptions(config)
    if described is None or len(described[1]) < 2:
        run.set_tag("stage_cache", "not used: a single training stage (only stages before the last are kept)")
        return None
    method_common, stages = described
    common = {
        "method": config.method,
        "method_fields": method_common,
        "model": model_identity(resolve_model_name(config.model)) if config.model else "",
        "data_dir": str(Path(data_dir).resolve()),
        "device": device.type,
        "autocast": str(amp_dtype),
    }
    settings = {**config.model_dump(mode="json"), **run_spec.nli.model_dump(mode="json")}  # SNLI: training
    params = run_spec.params.model_dump(mode="json") if run_spec.params is not None else {}
    keys = stage_keys(common, settings, params, stages)
    names = [f"{s['kind']}: {s['fields'].get(s['kind'])}" for s in stages]
    root = Path(config.stage_cache_dir) if config.stage_cache_dir else None
    cache = StageCache(root, int(config.stage_cache_max_gb * 1e9))
    remote = MlflowEntries(tracker, run.run_id) if config.stage_cache_mlflow else None
    description = {"method": config.method, "model": config.model}
    return CachedStages(cache, keys, names, run.run_id, description, remote)


class MlflowEntries:
    """Entries shared through the MLflow artifact store, for workers that share no folder: a stored
    entry is logged as the trial's artifact `stage-cache/<key>/` and tagged `stage_cache.entry.<key>`;
    a local miss looks for that tag in every experiment and downloads the entry into the local cache
    (moved into place atomically; its checksum is verified on load like any other)."""

    def __init__(self, tracker: Tracker, run_id: str) -> None:
        self.tracker = tracker
        self.run_id = run_id

    def publish(self, key: str, cache: StageCache) -> None:
        self.tracker.upload(self.run_id, cache.path(key), f"stage-cache/{key}")
        self.tracker.run(self.run_id).set_tag(f"stage_cache.entry.{key}", "stored")

    def fetch(self, key: str, cache: StageCache) -> bool:
        experiments = [e.experiment_id for e in self.tracker.experiments()]
        query = f"tags.`stage_cache.entry.{key}` = 'stored'"
        runs = self.tracker.search_runs(experiments, query, max_results=1)
        if not runs:
            return False
        target = cache.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{key}.download.") as scratch:
            folder = self.tracker.download(runs[0].info.run_id, f"stage-cache/{key}", scratch)
            with contextlib.suppress(OSError):  # another process put it in place first: fine
                folder.rename(target)
        return True


def record_cache_use(cache: CachedStages, run: LoggedRun, tracker: Tracker) -> None:
    tags = {"stage_cache": str(cache.cache.root)}
    if cache.reused is not None:
        count, entry, before = cache.reused
        tags["stage_cache.reused"] = f"{count} of {len(cache.keys)} stages ({entry.stages})"
        tags["stage_cache.source_run"] = entry.source_run
        _copy_history(tracker, entry.source_run, run, before, entry.step)
    if cache.stored:
        tags["stage_cache.stored"] = ", ".join(cache.names[i] for i in cache.stored)
    if cache.problems:
        tags["stage_cache.problems"] = "; ".join(cache.problems)[:4000]
    for key, value in tags.items():
        run.set_tag(key, value)


def _copy_history(tracker: Tracker, source: str, run: LoggedRun, first_step: int, last_step: int) -> None:
    """The source run's metrics after `first_step` (what this trial trained itself) up to `last_step`:
    its training curves and dev scores of the reused stages, when that run is in this tracking store."""
    try:
        metrics = tracker.get_run(source).data.metrics
    except Exception:  # another store, or deleted: the tags still name it
        return
    for stored in metrics:
        for point in tracker.stored_history(source, stored):
            if first_step < point.step <= last_step:
                run.log_metrics({canonical(stored): point.value}, step=point.step, flush=False)
    run.flush()
