"""`harness eval`: evaluate one model on chosen tasks, print a table, write JSON, optionally log to MLflow.

Results are written only after every task has been scored, so a bad data file leaves no JSON and no run.
The per-item record of the scored tasks (harness.stats.items) goes with them: beside the JSON as
`<name>.items.parquet`, and into the MLflow run as the artifact `items.parquet`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.data.lineage import lineage, reading
from harness.data.paths import resolve_data_dir
from harness.device import DTYPES, hardware_tags, pick_device
from harness.encoders.encoder import Encoder
from harness.encoders.location import check_available
from harness.evaluate.encode import EmbeddingCache
from harness.evaluate.limit import LIMIT_NOTE
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks, flat_metrics
from harness.tracking.tracker import Tracker, git_commit

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "spearman",
    "pearson",
    "spearman_mean",
    "spearman_wmean",
    "acc",
    "devacc",
    "f1",
    "alignment",
    "uniformity",
)


def run_eval(
    model: str,
    tasks: list[str],
    pooler: str = "model",
    text: str = "senteval",
    preset: str = "prototyping",
    data_dir: str | None = None,
    precision: str = "auto",
    device: str = "auto",
    batch_size: int = 128,
    max_length: int | None = None,
    cache: bool = True,
    progress: bool = True,
    classifier: str = "sklearn",
    items: list[pd.DataFrame] | None = None,
    mteb: dict[str, dict[str, float]] | None = None,
    limit: int | None = None,
) -> tuple[dict[str, dict[str, object]], dict[str, object]]:
    """(results per task, the settings that produced them: the run's options plus `hardware`, the
    resolved precision and what it ran on, see `harness.device.hardware_tags`, `seconds_by_part`,
    the encoding's and each task's scoring's wall time, and `data_files`, each file read with its size and
    sha256: harness.data.lineage); `items` gets each task's per-item record, and
    `mteb`, when given, the MTEB STS tasks' scores on MTEB's text (harness.evaluate.mteb_results); `limit`:
    at most that many items per subset or split (harness.evaluate.limit), recorded in the settings."""
    root = resolve_data_dir(data_dir)
    check_available(model)  # a hub model the hub cannot serve now: one line, not transformers' retries
    chosen = pick_device(device)
    hardware = hardware_tags(chosen, precision)
    amp_dtype = DTYPES[hardware["precision"]]
    encoder = Encoder(model, pooler, max_length).to(chosen)
    encode_fn = SentenceEncoder(encoder, batch_size, amp_dtype, EmbeddingCache() if cache else None, progress)
    start = time.perf_counter()
    parts: dict[str, float] = {}
    with reading() as files:
        results = evaluate_tasks(encode_fn, root, tasks, text, preset, classifier, parts, items, limit)  # type: ignore[arg-type]
        if mteb is not None:
            from harness.evaluate.mteb_results import mteb_scores, mteb_tasks

            started = time.perf_counter()
            mteb.update(mteb_scores(encode_fn, root, mteb_tasks(tasks)))
            parts["mteb"] = time.perf_counter() - started
    settings = {
        "model": model, "pooler": pooler, "embedding": encoder.embedding, "text": text, "preset": preset,
        "classifier": classifier,
        "tasks": ",".join(tasks),
        "precision": hardware["precision"], "device": str(chosen), "max_length": encoder.max_length,
        "data_dir": str(root), "seconds": round(time.perf_counter() - start, 1),
        "seconds_by_part": {part: round(value, 2) for part, value in parts.items()}, "hardware": hardware,
        "data_files": lineage(files, root),
        **({"limit": limit, "limit_note": LIMIT_NOTE} if limit is not None else {}),
    }  # fmt: skip
    return results, settings


def format_table(results: dict[str, dict[str, object]]) -> str:
    """A plain-text table: one row per task, the scores it has."""
    present = [c for c in COLUMNS if any(c in r for r in results.values())]
    lines = [f"{'task':20s}" + "".join(f"{c:>16s}" for c in present)]
    for task, scores in results.items():
        cells = "".join(f"{scores[c]:16.2f}" if c in scores else f"{'':16s}" for c in present)
        lines.append(f"{task:20s}{cells}")
    averages = {k: v for k, v in flat_metrics(results).items() if k.endswith(".avg")}
    lines += [f"{name:20s}{value:16.2f}" for name, value in averages.items()]
    return "\n".join(lines)


def items_path(json_path: str | Path) -> Path:
    """Where the per-item record goes beside the results JSON: `r.json` -> `r.items.parquet`."""
    return Path(json_path).with_suffix(".items.parquet")


def write_json(
    results: dict[str, dict[str, object]],
    settings: dict[str, object],
    path: str,
    items: pd.DataFrame | None = None,
) -> None:
    """Write `{"results": {task: scores}, "settings": {...}}` atomically: a complete file or none; with
    `items`, the record first (`items_path`, atomically too) and the JSON last, so a JSON on disk always
    has its record beside it, and a failure leaves neither."""
    from harness.staging import written_atomically
    from harness.stats.items import write_items

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if items is not None:
        write_items(items, items_path(target))
    try:
        with written_atomically(target) as scratch, open(scratch, "w") as out:
            json.dump({"results": results, "settings": settings}, out, indent=2)
    except BaseException:
        if items is not None:
            items_path(target).unlink(missing_ok=True)
        raise


def log_eval(
    results: dict[str, dict[str, object]],
    settings: dict[str, object],
    experiment: str,
    uri: str | None,
    items: pd.DataFrame | None = None,
) -> str:
    """One FINISHED MLflow run: the settings as params, the hardware as tags, every score as a metric
    (and `seconds.<part>`, the wall times), the results JSON, and the per-item record `items.parquet`."""
    tracker = Tracker(uri)
    experiment_id = tracker.experiment_id(experiment)
    hardware = settings["hardware"]
    assert isinstance(hardware, dict)
    tags = {"harness.role": "eval", "model": str(settings["model"]), "git_commit": git_commit(), **hardware}
    if "limit" in settings:  # a subset's scores carry their caveat into the UI
        tags["mlflow.note.content"] = f"limit {settings['limit']}: {LIMIT_NOTE}"

    run = tracker.start_run(experiment_id, f"eval {settings['model']} ({settings['pooler']})", tags)
    try:
        run.log_params(
            {k: v for k, v in settings.items() if k not in ("hardware", "seconds_by_part", "data_files")}
        )
        run.log_lineage({"evaluation": settings["data_files"]})  # type: ignore[dict-item]
        times = settings["seconds_by_part"]
        assert isinstance(times, dict)
        run.log_metrics({**flat_metrics(results), **{f"seconds.{k}": v for k, v in times.items()}})
        run.log_text(json.dumps(results, indent=2), "results.json")
        if items is not None:
            run.log_items(items)
    except BaseException as exc:
        run.finish("FAILED", f"{type(exc).__name__}: {exc}")
        raise
    run.finish("FINISHED")
    return run.run_id
