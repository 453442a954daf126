"""What `run-study` checks before anything is written, without importing torch, transformers or MLflow:
the places (data folder, tracking store, Optuna storage), the models' files, and the evaluation and
training data every distinct run of the grid reads. A bad input is one line at once, not after seconds
of imports, and leaves no store, journal or run behind."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.data.hub import model_in_cache
from harness.data.paths import resolve_data_dir
from harness.encoders.location import check_available, check_weights, resolve_model_name
from harness.errors import HarnessError
from harness.places import check_journal, check_reachable, default_storage, resolve_tracking_uri

if TYPE_CHECKING:
    from optuna.storages import BaseStorage

    from harness.resolve.study_spec import ResolvedStudy


@dataclass(frozen=True)
class Checked:
    """A study's places, reached and checked: the data folder, the tracking URI, the opened storage."""

    data_dir: Path
    tracking_uri: str
    storage: BaseStorage


def check_before_start(
    study: ResolvedStudy,
    storage_spec: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
    workers: int,
    heartbeat: int,
) -> Checked:
    """Every check `run-study` makes before it writes, in the order a user fixes them."""
    if workers == 0 and "://" not in (storage_spec or ""):
        raise HarnessError(
            "--workers 0 (workers started elsewhere) needs a storage with heartbeats to notice lost "
            "workers; give --storage an RDB URL (postgresql://... or sqlite:///...)"
        )
    root = resolve_data_dir(data_dir)
    uri = resolve_tracking_uri(tracking_uri)
    check_reachable(uri)
    check_inputs(study, root, uri)
    from harness.study.optuna_study import (
        open_storage,  # optuna (and sqlalchemy for an RDB URL): after the cheap checks
    )

    return Checked(root, uri, open_storage(storage_spec, heartbeat))


def check_worker_places(storage_spec: str | None, tracking_uri: str | None, data_dir: str | None) -> None:
    """What `harness worker` needs before it joins: the data folder, the tracking store, and (a journal)
    the study's journal file, which `run-study` creates."""
    resolve_data_dir(data_dir)
    check_reachable(resolve_tracking_uri(tracking_uri))
    if "://" not in (storage_spec or ""):
        check_journal(storage_spec or default_storage(), create=False)


def check_inputs(study: ResolvedStudy, data_dir: Path, tracking_uri: str) -> None:
    """Fail before anything is written when evaluation data, models or training sets cannot be loaded."""
    from harness.methods.base import DataSources

    runs = study.grid_runs()
    for model in sorted({run.settings.model for run in runs if run.method.needs_encoder}):
        check_model(model)
    for run in {json.dumps(run.flat(), sort_keys=True, default=str): run for run in runs}.values():
        run.scorer.preflight(run, data_dir)  # evaluation data (loaders cache what they read)
        run.method.load_train_data(run, DataSources(data_dir, tracking_uri))


def check_model(model: str) -> None:
    """A local folder's config.json parses and its weights are readable; a hub id's config is in the
    local hub cache, else transformers is asked (it downloads, or says why it cannot)."""
    resolved = resolve_model_name(model)
    if Path(resolved).is_dir():
        config = Path(resolved) / "config.json"
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HarnessError(
                f"cannot load model {model!r}: {config} is not a readable JSON config ({exc}); save the "
                "model there with save_pretrained, or give another model"
            ) from None
    elif not model_in_cache(resolved):
        check_available(model)  # the hub is off or does not answer: at once, not after its retries
        from transformers import AutoConfig

        try:
            AutoConfig.from_pretrained(resolved)
        except OSError as exc:
            raise HarnessError(
                f"cannot load model {model!r}: {str(exc).splitlines()[0]}; "
                "use a local directory or all-MiniLM-L6-v2 when offline"
            ) from None
    check_weights(resolved)
