"""`harness eval --limit N`: each subset or split cut to a fixed sample, its rows kept aligned, on the real
STS and SentEval files; the CLI scores only the sample and says so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.data.paths import resolve_data_dir
from harness.errors import HarnessError
from harness.evaluate.limit import LIMIT_NOTE, limited
from harness.evaluate.registry import get_task
from tests.helpers import harness_here


def test_sts_subsets_are_cut_with_pairs_aligned() -> None:
    full = get_task("STS12").load(resolve_data_dir(None), "senteval")
    cut = limited(full, 40)
    assert [s.name for s in cut] == [s.name for s in full] and all(len(s) == 40 for s in cut)
    for whole, part in zip(full, cut, strict=True):
        rows = iter(zip(whole.sent1, whole.sent2, whole.scores.tolist(), strict=True))
        kept = zip(part.sent1, part.sent2, part.scores.tolist(), strict=True)
        assert all(row in rows for row in kept)  # a subsequence: the file's pairs, gold scores, order
    assert limited(full, 40)[0].sent1 == cut[0].sent1  # fixed: the same sample each time


def test_a_transfer_task_keeps_both_classes_where_a_head_would_not() -> None:
    full = get_task("MR").load(resolve_data_dir(None), "senteval")
    (split,) = full.values()
    assert set(split.labels[:100].tolist()) == {1} or set(split.labels[:100].tolist()) == {0}  # a head: one
    (cut,) = limited(full, 100).values()
    assert len(cut) == 100 and set(np.unique(cut.labels).tolist()) == {0, 1}


def test_data_it_cannot_cut_is_refused() -> None:
    with pytest.raises(HarnessError, match="--limit cannot cut task data of type str"):
        limited("text", 10)


@pytest.mark.slow
def test_eval_limit_scores_the_sample_and_says_so(tiny_bert: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    model = ["eval", "--model", str(tiny_bert), "--limit", "50"]
    result = harness_here(*model, "--tasks", "STS12,STSBenchmark,MR", "--json", str(out), "--no-progress")
    assert result.returncode == 0, result.stderr
    written = json.loads(out.read_text())
    results, settings = written["results"], written["settings"]
    assert results["STS12"]["n"] == 5 * 50 and results["STSBenchmark"]["n"] == 50
    assert settings["limit"] == 50 and settings["limit_note"] == LIMIT_NOTE
    assert f"(--limit 50: at most 50 items per subset or split; {LIMIT_NOTE})" in result.stdout
    refused = harness_here(*model, "--mteb-results", str(tmp_path))
    assert refused.returncode == 2 and "drop --limit to write MTEB results" in refused.stderr
