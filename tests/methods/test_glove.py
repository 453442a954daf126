"""`glove` (Liao's "Avg. GloVe embeddings"): the mean of the known words' vectors, zeros when none is known,
a skipped trial without a vectors file, and a real study scored on the STS sets with no transformer."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.encoders.glove import GloveEmbedder, tokenize
from harness.evaluate.registry import get_task
from harness.evaluate.tasks.sts import STS_TASKS
from harness.methods.glove import AverageGlove, GloveParams
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, tiny_study

VECTORS = {"the": [1.0, 2.0, 0.0], "cat": [3.0, 0.0, 1.0], "sat": [2.0, 4.0, 5.0], ".": [0.5, 0.5, 0.5]}


def write_vectors(path: Path, vectors: dict[str, list[float]], extra: str = "") -> Path:
    text = "".join(f"{w} {' '.join(str(x) for x in v)}\n" for w, v in vectors.items()) + extra
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_tokens_separate_punctuation_and_keep_case() -> None:
    text = "The state-of-the-art Nasdaq's index fell 0.11 percent, to 1,650. Don't!"
    assert tokenize(text) == ["The", "state-of-the-art", "Nasdaq", "'s", "index", "fell", "0.11", "percent",
                              ",", "to", "1,650", ".", "Don", "'t", "!"]  # fmt: skip
    assert tokenize("it 's a huge black eye , \" said") == ["it", "'s", "a", "huge", "black", "eye", ",",
                                                             '"', "said"]  # fmt: skip


@pytest.mark.parametrize("name", ["vectors.txt", "vectors.txt.gz"])
def test_sentence_is_the_mean_of_its_word_vectors(tmp_path: Path, name: str) -> None:
    embedder = GloveEmbedder(write_vectors(tmp_path / name, VECTORS, extra="unused 9 9 9\n"))
    got = embedder.embed(["the cat sat.", "The cat"])
    expected = (np.array(VECTORS["the"]) + np.array(VECTORS["cat"]) + np.array(VECTORS["sat"]) + 0.5) / 4
    assert torch.allclose(got[0], torch.tensor(expected, dtype=torch.float32))
    # cased: "The" is not "the", so only "cat" counts
    assert torch.allclose(got[1], torch.tensor(VECTORS["cat"]))
    assert "unused" not in embedder.rows  # only the words asked for are read


def test_unknown_words_are_skipped_and_none_known_is_zero(tmp_path: Path) -> None:
    # a line whose word holds spaces (as in glove.840B) has the wrong width and is skipped
    path = write_vectors(tmp_path / "v.txt", VECTORS, extra=". . . 7 7 7 7\n")
    embedder = GloveEmbedder(path)
    got = embedder.embed(["zebra cat quagga", "zebra quagga", "", "."])
    assert torch.allclose(got[0], torch.tensor(VECTORS["cat"]))
    assert torch.equal(got[1], torch.zeros(3))
    assert torch.allclose(got[2], torch.tensor(VECTORS["."]))  # empty: read as "." (SentEval bow.py:77)
    assert torch.allclose(got[3], torch.tensor(VECTORS["."]))
    assert {"zebra", "quagga"} <= embedder.searched and "zebra" not in embedder.rows


def test_method_has_no_transformer_and_evaluates_the_embedder(tmp_path: Path) -> None:
    path = write_vectors(tmp_path / "v.txt", VECTORS)
    method = AverageGlove.build(None, GloveParams(glove_path=str(path)), ())
    assert method.encoder is None and not AverageGlove.needs_encoder
    assert method.eval_encoder() is method.embedder and method.stages(None, []) == []


@pytest.mark.slow
@pytest.mark.parametrize("given", [None, "missing.txt"])
def test_no_vectors_file_skips_the_trial_until_one_is_given(
    given: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HARNESS_GLOVE_PATH", raising=False)
    fields = {} if given is None else {"glove_path": str(tmp_path / given)}
    study = tiny_study(tmp_path, tmp_path / "no-such-model", {"seed": [1]}, name="glove-skip",
                       method="glove", **fields)  # fmt: skip
    opt = run_study(load_study(study), progress=False)
    assert [t.state.name for t in opt.trials] == ["FAIL"]
    notice = opt.trials[0].user_attrs["skipped"]
    assert notice.startswith("glove: ") and "set glove_path: /path/glove.840B.300d.txt" in notice
    assert "--retry-failed" in notice and "HARNESS_GLOVE_PATH" in notice
    assert "\n" not in notice and f"trial 0 skipped: {notice}" in capsys.readouterr().out
    (run,) = child_runs("glove-skip")
    assert run.info.status == "KILLED" and run.data.tags["error"] == f"skipped: {notice}"
    tracker = Tracker()
    parent = tracker.client.get_run(run.data.tags["mlflow.parentRunId"])
    assert parent.info.status == "FINISHED" and metrics_of(parent)["trials.skipped"] == 1
    assert metrics_of(parent)["trials.failed"] == 0  # skipped, not an error
    if given is None:  # the file given by the environment: the same study resumes and runs the trial
        monkeypatch.setenv("HARNESS_GLOVE_PATH", str(write_vectors(tmp_path / "v.txt", VECTORS)))
        opt = run_study(load_study(study), progress=False, retry_failed=True)
        assert "COMPLETE" in [t.state.name for t in opt.trials]


def sts_vectors(path: Path, data_dir: Path, width: int = 32) -> Path:
    """Random vectors for every token of the STS sets (a stand-in for GloVe: shared words still make
    similar sentences close)."""
    words: set[str] = set()
    for name in [*STS_TASKS, "STSBenchmark-dev"]:
        task = get_task(name)
        for sentence in task.sentences(task.load(data_dir, "senteval")):
            words.update(tokenize(sentence))
    rng = np.random.default_rng(0)
    lines = (f"{w} {' '.join(f'{x:.4f}' for x in rng.standard_normal(width))}\n" for w in sorted(words))
    path.write_bytes(gzip.compress("".join(lines).encode("utf-8"), compresslevel=1))
    return path


@pytest.mark.slow
def test_study_scores_glove_on_sts_without_a_model(tmp_path: Path, data_dir: Path) -> None:
    vectors = sts_vectors(tmp_path / "sts-words.txt.gz", data_dir)
    study = tiny_study(tmp_path, tmp_path / "no-such-model", {"seed": [1]}, name="glove-sts",
                       method="glove", glove_path=str(vectors), final_tasks=None)  # fmt: skip
    opt = run_study(load_study(study), progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE"], opt.trials[0].user_attrs
    (run,) = child_runs("glove-sts")
    metrics = metrics_of(run)
    assert run.info.status == "FINISHED" and metrics["train.steps"] == 0
    assert opt.trials[0].value == pytest.approx(metrics["dev.STSBenchmark.spearman"])
    assert all(f"{task}.spearman" in metrics for task in STS_TASKS) and "STS12-16.wmean" in metrics
    assert 10 < metrics["STS12.spearman"] < 100  # word overlap alone correlates with the gold scores
