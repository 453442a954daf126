"""Saved trial models: sentence-transformers loads them and gives the harness's embeddings; a trial with
`save_model: true` logs them, and `harness eval` scores the downloaded folder with its own pooling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from harness.encoders.encoder import Encoder
from harness.encoders.save import save_encoder, saved_settings
from harness.tracking.metric_names import metrics_of

SENTENCES = ["A man is playing a guitar.", "Two dogs run on the grass.", "short"]


@pytest.mark.parametrize("pooling", ["mean", "cls", "cls_before_pooler"])
def test_sentence_transformers_gives_the_same_embeddings(
    pooling: str, tiny_bert: Path, tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer

    encoder = Encoder(str(tiny_bert), pooling, 32).eval()
    assert save_encoder(encoder, tmp_path / "model")
    assert (tmp_path / "model" / "model.safetensors").is_file()
    assert saved_settings(str(tmp_path / "model")) == {"pooling": pooling, "max_seq_length": 32}
    with torch.no_grad():
        ours = encoder.embed(SENTENCES).numpy()
    theirs = SentenceTransformer(str(tmp_path / "model"), device="cpu").encode(
        SENTENCES, convert_to_numpy=True
    )
    assert theirs == pytest.approx(ours, abs=1e-5)


def test_a_pooling_without_a_sentence_transformers_module_saves_the_weights_only(
    tiny_bert: Path, tmp_path: Path
) -> None:
    assert not save_encoder(Encoder(str(tiny_bert), "mean_no_cls", 32), tmp_path)
    assert (tmp_path / "model.safetensors").is_file() and not (tmp_path / "modules.json").exists()
    assert saved_settings(str(tmp_path)) == {"pooling": "mean_no_cls", "max_seq_length": 32}


@pytest.mark.slow
def test_a_trial_saves_its_model_and_harness_eval_scores_it(tmp_path: Path, tiny_bert: Path) -> None:
    from harness.resolve.study_spec import load_study
    from harness.study.runner import run_study
    from harness.tracking.tracker import Tracker
    from tests.helpers import child_runs, harness_here, tiny_study

    # clipped as before scl's paper default (no clipping, issue 42): one unclipped step of the random tiny
    # BERT leaves the downloaded model's STS-B score 0.003 off the trial's (36.029 vs 36.032), an open
    # difference between the two evaluation paths that only large weights show (named in issue 42's note)
    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="saved", max_steps=1,
                                  save_model=True, pooling="cls_before_pooler",
                                  max_grad_norm=1.0))  # fmt: skip
    run_study(study, progress=False)
    (child,) = child_runs("saved")
    assert child.data.tags["model_saved"] == "model/ (sentence-transformers)"
    folder = Tracker().client.download_artifacts(child.info.run_id, "model", str(tmp_path / "download"))
    out = tmp_path / "eval.json"
    args = ["--tasks", "STSBenchmark", "--precision", "fp32", "--batch-size", "512", "--no-progress"]
    result = harness_here("eval", "--model", folder, *args, "--no-cache", "--json", str(out))
    assert result.returncode == 0, result.stderr
    saved = json.loads(out.read_text())
    assert saved["settings"]["pooler"] == "cls_before_pooler"  # read from the saved harness.json
    # the downloaded weights score as the trial scored its final model (the same batches as the trial's
    # eval_batch_size: the same sums in the same order, so the same score to the last digit)
    assert saved["results"]["STSBenchmark"]["spearman"] == metrics_of(child)["STSBenchmark.spearman"]
