"""Semantic textual similarity: STS12-16, STS-B (test / dev / train) and SICK-R. Cosine similarity of
the two embeddings against gold, Spearman x 100 (harness.evaluate.sts); `STS.avg` is SimCSE's Avg. over
the seven test sets."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from harness.data.senteval import STSPairs
from harness.evaluate.registry import ScoreOptions, declare_aggregate, declare_suite, register_task
from harness.evaluate.sts import STS_TASKS, load_sts_task, score_task

STS_TEST = STS_TASKS  # the seven test sets, named once in harness.evaluate.sts
# the scores of harness.evaluate.sts.score_task (`n` and the per-subset `subsets` are not logged)
SCORES = ("spearman", "pearson", "spearman_mean", "spearman_wmean")


def pair_sentences(subsets: Sequence[STSPairs]) -> Iterable[str]:
    return {s for pairs in subsets for s in (*pairs.sent1, *pairs.sent2)}


def score(task: str, subsets: Sequence[STSPairs], embeddings: dict, options: ScoreOptions) -> dict:
    return score_task(subsets, embeddings, task)  # with the task's per-item record (harness.evaluate.items)


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
