"""Semantic textual similarity: STS12-16, STS-B (test / dev / train) and SICK-R. Cosine similarity of
the two embeddings against gold, Spearman and Pearson x 100; `STS.avg` is SimCSE's Avg. over the seven
test sets.

STS12-16 are scored per subset and aggregated three ways: `all` (one correlation over the pooled pairs
of every subset: what SimCSE reports and MTEB computes), `mean` (plain mean over subsets) and `wmean`
(mean weighted by subset size: SentEval's). STS-B and SICK-R have one subset, so all three coincide.
Each pair's cosine, beside its gold score and subset, is the task's per-item record (protocol `sts`,
harness.stats.items), from which all of these are recomputed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from harness.data.lineage import cached_reader
from harness.data.senteval import STS_YEARS, STSPairs, Variant, read_sick, read_sts_year, read_stsb
from harness.evaluate.registry import ITEMS, ScoreOptions, declare_aggregate, declare_suite, register_task

STS_TASKS: tuple[str, ...] = (*(f"STS{y}" for y in STS_YEARS), "STSBenchmark", "SICKRelatedness")

Embeddings = dict[str, np.ndarray]


@cached_reader(maxsize=32)
def load_sts_task(
    data_dir: Path, task: str, variant: Variant = "senteval", split: str = "test"
) -> tuple[STSPairs, ...]:
    """The subsets of one STS task (cached per process: studies evaluate after every trial)."""
    if task.startswith("STS1"):
        return tuple(read_sts_year(data_dir, int(task[3:]), variant))
    if task == "STSBenchmark":
        return (read_stsb(data_dir, split, variant),)
    if task == "SICKRelatedness":
        return (read_sick(data_dir, split),)
    raise ValueError(f"unknown STS task {task!r}; choose from {', '.join(STS_TASKS)}")


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two [n, d] arrays."""
    a = a / np.linalg.norm(a, axis=1, keepdims=True).clip(min=1e-12)
    b = b / np.linalg.norm(b, axis=1, keepdims=True).clip(min=1e-12)
    return np.einsum("ij,ij->i", a, b)


def correlations(predicted: np.ndarray, gold: np.ndarray) -> dict[str, float]:
    """Spearman and Pearson correlation x 100."""
    from scipy.stats import pearsonr, spearmanr  # here: listing tasks needs no scipy

    return {
        "spearman": 100.0 * float(spearmanr(predicted, gold).statistic),
        "pearson": 100.0 * float(pearsonr(predicted, gold).statistic),
    }


def pair_similarities(pairs: STSPairs, embeddings: Embeddings) -> np.ndarray:
    left = np.stack([embeddings[s] for s in pairs.sent1])
    right = np.stack([embeddings[s] for s in pairs.sent2])
    return cosine(left, right)


def score_task(
    subsets: Sequence[STSPairs], embeddings: Embeddings, task: str | None = None
) -> dict[str, object]:
    """One task's scores: `all` as spearman / pearson, plus spearman_mean, spearman_wmean, subsets; given
    the `task`'s name, also its per-item record under ITEMS (each subset's pairs in the file's order)."""
    sims = [pair_similarities(s, embeddings) for s in subsets]
    per_subset = {
        s.name: {**correlations(sim, s.scores), "n": len(s)} for s, sim in zip(subsets, sims, strict=True)
    }
    pooled = correlations(np.concatenate(sims), np.concatenate([s.scores for s in subsets]))
    sizes = np.array([len(s) for s in subsets], dtype=np.float64)
    spearmans = np.array([per_subset[s.name]["spearman"] for s in subsets])
    scores = {
        **pooled,
        "spearman_mean": float(spearmans.mean()),
        "spearman_wmean": float((spearmans * sizes).sum() / sizes.sum()),
        "n": int(sizes.sum()),
        "subsets": per_subset,
    }
    if task is not None:
        from harness.stats.items import concat_items, item_rows  # pandas: only where a record is kept

        parts = [item_rows(task, "sts", sim, s.scores, s.name) for s, sim in zip(subsets, sims, strict=True)]
        scores[ITEMS] = concat_items(parts)
    return scores


STS_TEST = STS_TASKS  # the seven test sets
# the scores of score_task (`n` and the per-subset `subsets` are not logged)
SCORES = ("spearman", "pearson", "spearman_mean", "spearman_wmean")


def pair_sentences(subsets: Sequence[STSPairs]) -> Iterable[str]:
    return {s for pairs in subsets for s in (*pairs.sent1, *pairs.sent2)}


def score(task: str, subsets: Sequence[STSPairs], embeddings: dict, options: ScoreOptions) -> dict:
    return score_task(subsets, embeddings, task)  # with the task's per-item record


def _load(task: str, split: str, data_dir: Path, variant: str) -> tuple[STSPairs, ...]:
    return load_sts_task(data_dir, task, variant, split)  # type: ignore[arg-type]


SPLITS = {"STSBenchmark": "test", "STSBenchmark-dev": "dev", "STSBenchmark-train": "train"}
for _name in (*STS_TEST, "STSBenchmark-dev", "STSBenchmark-train"):
    _task, _split = ("STSBenchmark", SPLITS[_name]) if _name in SPLITS else (_name, "test")
    register_task(
        _name, kind="sts", sentences=pair_sentences, scorer=partial(score, _name), main_score="spearman",
        splits=(_split,), description=f"{_task} {_split}: cosine Spearman x 100", scores=SCORES,
    )(partial(_load, _task, _split))  # fmt: skip

declare_aggregate("STS.avg", STS_TEST, "spearman", "mean Spearman of STS12-16, STS-B test, SICK-R test")
declare_aggregate(
    "STS12-16.wmean",
    tuple(t for t in STS_TEST if t.startswith("STS1")),  # STS12-16
    "spearman_wmean",
    "mean over STS12-16 of SentEval's size-weighted mean Spearman of each year's subsets (Liao Table 2)",
)
declare_suite("sts", STS_TEST)
declare_suite("quick", ("STSBenchmark",))  # own studies iterating: the STS-B test set alone (seconds)
