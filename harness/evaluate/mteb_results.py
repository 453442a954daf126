"""STS scores in MTEB's results layout, so that MTEB's own loader (`mteb.ResultCache.load_results`) and
its leaderboard tools read them: `<folder>/results/<model name, / as __>/<revision>/<Task>.json` plus
`model_meta.json` beside them (MTEB 2.x `TaskResult`: `task_name`, `dataset_revision`, `scores` per split,
one entry per HF subset with `main_score`, `hf_subset`, `languages`).

Each MTEB task is scored on MTEB's own text and pairs. Which of the harness's texts that is was checked
against the statistics MTEB ships for each task (mteb 2.26.24 `descriptive_stats/STS/<Task>.json`: pair
count, total characters of each side, distinct sentences, mean gold score), all equal
(tests/evaluate/test_mteb_results.py; letter case is not among those statistics):
- STS12-16: the SentEval-tokenized text (`senteval`), all subsets pooled into one test set;
- STSBenchmark: the raw text (`raw`, the original casing and punctuation), test split.
Not written: SICK-R (MTEB's `mteb/sickr-sts` holds all 9,927 SICK pairs, as train + trial + test here, but
its text differs: 462,620 characters of first sentences against 463,296 here), and every harness score
that is not an MTEB task's (SentEval transfer, geometry, the SentEval-tokenized STS-B).

The scores are the harness's own (harness.evaluate.tasks.sts: one correlation over the pooled pairs, as
MTEB computes it) as fractions, as MTEB stores them: `cosine_spearman` (MTEB's main score for STS),
`cosine_pearson`, and `spearman` / `pearson` (the model's similarity function, cosine). MTEB's
Manhattan and Euclidean correlations are not computed."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.choices import TextVariant
from harness.errors import HarnessError
from harness.evaluate.suite import evaluate_tasks
from harness.staging import staged

NO_REVISION = "no_revision_available"  # MTEB's revision for a model it cannot name one for
LANGUAGES = ["eng-Latn"]


@dataclass(frozen=True)
class MtebTask:
    """An MTEB STS task as the harness scores it: the harness task, its text variant, MTEB's dataset."""

    name: str
    harness_task: str
    variant: TextVariant
    dataset_revision: str  # mteb 2.26.24 TaskMetadata.dataset["revision"]


MTEB_TASKS = {
    task.name: task
    for task in (
        MtebTask("STS12", "STS12", "senteval", "a0d554a64d88156834ff5ae9920b964011b16384"),
        MtebTask("STS13", "STS13", "senteval", "7e90230a92c190f1bf69ae9002b8cea547a64cca"),
        MtebTask("STS14", "STS14", "senteval", "6031580fec1f6af667f0bd2da0a551cf4f0b2375"),
        MtebTask("STS15", "STS15", "senteval", "ae752c7c21bf194d8b67fd573edf7ae58183cbe3"),
        MtebTask("STS16", "STS16", "senteval", "4d8694f8f0e0100860b497b999b3dbed754a0513"),
        MtebTask("STSBenchmark", "STSBenchmark", "raw", "b0fddb56ed78048fa8b90373c8a3cfc37b684831"),
    )
}


def mteb_scores(
    encode: Callable[[list[str]], dict], data_dir: Path, names: Sequence[str] = tuple(MTEB_TASKS)
) -> dict[str, dict[str, float]]:
    """MTEB task -> its scores entry (fractions, `main_score` = cosine Spearman), each task scored on
    MTEB's text with `encode` (a SentenceEncoder: cached sentences are not encoded again)."""
    unknown = [name for name in names if name not in MTEB_TASKS]
    if unknown:
        known = ", ".join(MTEB_TASKS)
        raise HarnessError(f"not an MTEB task the harness writes: {', '.join(unknown)}; use {known}")
    scores = {}
    for name in names:
        task = MTEB_TASKS[name]
        result = evaluate_tasks(encode, data_dir, [task.harness_task], task.variant)[task.harness_task]
        spearman = float(result["spearman"]) / 100  # type: ignore[arg-type]
        pearson = float(result["pearson"]) / 100  # type: ignore[arg-type]
        scores[name] = {"cosine_spearman": spearman, "cosine_pearson": pearson, "spearman": spearman,
                        "pearson": pearson, "main_score": spearman}  # fmt: skip
    return scores


def mteb_tasks(tasks: Sequence[str]) -> list[str]:
    """The MTEB tasks among the harness tasks `tasks` (STS-B dev or train, SICK-R, transfer: none)."""
    chosen = [name for name, task in MTEB_TASKS.items() if task.harness_task in tasks]
    if not chosen:
        raise HarnessError(
            f"none of the tasks is an MTEB task the harness writes ({', '.join(MTEB_TASKS)}); add one"
        )
    return chosen


def mteb_model_name(model: str) -> str:
    """The name MTEB knows a model by: the hub id (all-MiniLM-L6-v2's alias as its full id), else the
    local folder's name."""
    from harness.encoders.location import MINILM_ALIASES

    if model in MINILM_ALIASES:
        return MINILM_ALIASES[-1]
    path = Path(model).expanduser()
    return path.resolve().name if path.is_dir() else model


def model_folder_name(model: str) -> str:
    """MTEB's folder for a model name: `org/name` -> `org__name`."""
    return re.sub(r"[^\w.-]+", "_", model.replace("/", "__"))


def write_mteb_results(
    folder: Path,
    model: str,
    scores: dict[str, dict[str, float]],
    revision: str = NO_REVISION,
    seconds: float | None = None,
) -> Path:
    """Write `scores` (mteb_scores') under `folder/results/<model>/<revision>/`, whole or not at all (the
    revision folder is built beside its place and moved in; files of other tasks already there stay)."""
    target = folder / "results" / model_folder_name(model) / revision
    with staged(target.parent, ".mteb-", "MTEB results") as scratch:
        if target.is_dir():  # another run's tasks for this model stay
            for old in target.glob("*.json"):
                (scratch / old.name).write_bytes(old.read_bytes())
        meta = {"name": model, "revision": revision, "framework": ["Sentence Transformers"],
                "languages": LANGUAGES, "release_date": None}  # fmt: skip
        (scratch / "model_meta.json").write_text(json.dumps(meta, indent=2))
        for name, entry in scores.items():
            result = {
                "dataset_revision": MTEB_TASKS[name].dataset_revision,
                "task_name": name,
                "mteb_version": None,  # written by the harness, not by MTEB
                "scores": {"test": [{**entry, "hf_subset": "default", "languages": LANGUAGES}]},
                "evaluation_time": seconds,
                "kg_co2_emissions": None,
            }
            (scratch / f"{name}.json").write_text(json.dumps(result, indent=2))
        if target.exists():  # swapped, then the old one removed: a reader sees the old or the new folder
            old = scratch.with_name(scratch.name + ".old")
            target.rename(old)
            scratch.rename(target)
            shutil.rmtree(old)
        else:
            scratch.rename(target)
    return target
