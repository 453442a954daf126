"""The model card `harness export` writes beside an exported model (`README.md`), from the trial's MLflow
run alone: YAML metadata the Hugging Face Hub's card parser reads (`huggingface_hub.ModelCard`:
library, pipeline tag, base model where it is a hub id, the training data, tags, and `model-index` with
the harness's final scores), then the method and its paper, the trial's fields, its training curve in
short, every final score with how it was computed, the data files it read (size and sha256), the package
versions and the git commit it ran with."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from harness.encoders.location import MINILM_ALIASES
from harness.evaluate.registry import aggregates, tasks
from harness.registry import METHODS
from harness.tracking.metric_names import SECTIONS, metrics_of
from harness.tracking.tracker import LINEAGE_ARTIFACT, Tracker

TASK_TYPES = {"sts": "sentence-similarity", "classification": "text-classification"}
SCORE_MEANINGS = {  # how each score of a task is computed (harness/evaluate/tasks/)
    "spearman": "Spearman x 100 of cosine vs gold, one correlation over all pairs",
    "pearson": "Pearson x 100 of cosine vs gold, one correlation over all pairs",
    "spearman_mean": "mean over the subsets of their Spearman x 100",
    "spearman_wmean": "mean over the subsets of their Spearman x 100, weighted by size (SentEval's)",
    "acc": "test accuracy x 100 of SentEval's logistic-regression probe",
    "devacc": "validation accuracy x 100 of SentEval's probe (its model choice)",
    "f1": "F1 x 100 of the paraphrase class (MRPC)",
    "alignment": "alignment (Wang & Isola 2020), pairs with gold >= 4",
    "uniformity": "uniformity (Wang & Isola 2020)",
    "n_pos": "positive pairs counted for alignment",
}


def _base_model(model: str) -> str | None:
    """The hub id of the trained model's starting point, or None for a local folder."""
    if model in MINILM_ALIASES:
        return MINILM_ALIASES[-1]
    return None if model.startswith(("/", ".", "~")) or Path(model).exists() else model


def _lineage(tracker: Tracker, run_id: str) -> dict[str, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory() as scratch:
        try:
            return json.loads(tracker.download(run_id, LINEAGE_ARTIFACT, scratch).read_text())
        except Exception:  # noqa: BLE001 - a run from before lineage was recorded
            return {}


def _method_text(method: str) -> str:
    """The method's own description: the first two paragraphs of its module's docstring (they name the
    paper and the equation)."""
    entry = METHODS.entries().get(method)
    doc = sys.modules[entry.__module__].__doc__ if entry is not None else None
    paragraphs = (doc or f"`{method}`").strip().split("\n\n")[:2]
    return "\n\n".join(paragraphs)


def final_scores(run: Any) -> dict[str, float]:
    """The run's final scores: every metric outside the curve and counter sections."""
    return {
        k: v for k, v in sorted(metrics_of(run).items()) if k.partition(".")[0] not in SECTIONS and "." in k
    }


def _model_index(name: str, scores: dict[str, float]) -> list[dict[str, Any]]:
    known = tasks()
    results = []
    for metric, value in scores.items():
        task_name, _, score = metric.partition(".")
        task = known.get(task_name)
        if task is None or score != task.main_score:
            continue
        results.append({
            "task": {"type": TASK_TYPES.get(task.kind, task.kind), "name": task.kind},
            "dataset": {"name": task_name, "type": task_name, "split": task.splits[0]},
            "metrics": [{"type": score, "value": round(value, 4), "name": f"{score} ({task.description})"}],
        })  # fmt: skip
    return [{"name": name, "results": results}] if results else []


def _table(header: tuple[str, ...], rows: Sequence[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)])


def model_card(tracker: Tracker, run: Any, name: str) -> str:
    """The card's text for the trial `run` exported as `name`."""
    params, tags = run.data.params, run.data.tags
    scores = final_scores(run)
    lineage = _lineage(tracker, run.info.run_id)
    trained_on = sorted({str(Path(row["path"]).parent) for row in lineage.get("training", [])})
    metadata: dict[str, Any] = {
        "library_name": "sentence-transformers",
        "pipeline_tag": "sentence-similarity",
        **({"base_model": base} if (base := _base_model(params.get("model", ""))) else {}),
        **({"datasets": trained_on} if trained_on else {}),
        "tags": ["sentence-transformers", "sentence-similarity", "feature-extraction", "harness",
                 params.get("method", "")],
        **({"model-index": index} if (index := _model_index(name, scores)) else {}),
    }  # fmt: skip
    loss = tracker.history(run.info.run_id, "train.loss")
    curve = (
        f"training loss {loss[0].value:.4g} at step {loss[0].step}, {min(p.value for p in loss):.4g} at its "
        f"lowest, {loss[-1].value:.4g} at step {loss[-1].step}"
        if loss
        else "no training loss logged"
    )
    metrics = metrics_of(run)
    known, declared = tasks(), aggregates()
    score_rows = []
    for metric, value in scores.items():
        head, _, score = metric.partition(".")
        task = known.get(head)
        if task is not None:
            how = f"{head}, {task.splits[0]} split: {SCORE_MEANINGS.get(score, score)}"
        else:
            how = declared[metric].description if metric in declared else ""
        score_rows.append((metric, f"{value:.4g}", how))
    data_rows = [
        (context, row["path"], row["bytes"], row["sha256"])
        for context, rows in lineage.items()
        for row in rows
    ]
    sections = [
        "---\n" + yaml.safe_dump(metadata, sort_keys=False) + "---",
        f"# {name}",
        f"Trained with the `{params.get('method')}` method of the harness (study `{tags.get('study')}`, "
        f"trial {tags.get('trial')}): {_method_text(params.get('method', ''))}",
        "## Training",
        f"From `{params.get('model')}`; {int(metrics.get('train.steps', 0))} steps, the weights of step "
        f"{int(metrics.get('train.best_step', 0))} kept; {curve}; {metrics.get('train.seconds', 0):.0f} s.",
        _table(("field", "value"), sorted(params.items())),
        "## Scores",
        f"Text: `{params.get('text_variant', 'senteval')}` for the STS tasks (harness/evaluate/tasks/).",
        _table(("score", "value", "how"), score_rows),
        "## Data",
        _table(("use", "file", "bytes", "sha256"), data_rows) if data_rows else "No data files recorded.",
        "## Versions",
        f"{tags.get('versions', 'not recorded')}; harness commit {tags.get('git_commit', 'unknown')}; "
        f"MLflow run {run.info.run_id}.",
    ]
    return "\n\n".join(sections) + "\n"


def write_model_card(tracker: Tracker, run: Any, folder: Path, name: str) -> Path:
    """`folder/README.md` (replacing the one sentence-transformers saved with the weights, if any)."""
    path = folder / "README.md"
    path.write_text(model_card(tracker, run, name))
    return path
