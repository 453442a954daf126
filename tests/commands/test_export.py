"""`harness export STUDY`: the best trial's saved model out of MLflow, loadable by sentence-transformers,
scoring as the trial scored it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from tests.helpers import child_runs, harness_here, tiny_study


@pytest.mark.slow
def test_export_writes_the_best_trials_model(tmp_path: Path, tiny_bert: Path) -> None:
    from sentence_transformers import SentenceTransformer

    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.9]}, name="exported", max_steps=2,
                       save_model=True, pooling="mean")  # fmt: skip
    run_study(load_study(study), progress=False)
    runs = child_runs("exported")
    best = max(runs, key=lambda r: metrics_of(r)["dev.STSBenchmark.spearman.best"])

    out = tmp_path / "best"
    result = harness_here("export", "exported", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "model.safetensors").is_file() and (out / "modules.json").is_file()
    model = SentenceTransformer(str(out), device="cpu")
    assert model.encode(["a sentence"]).shape == (1, 32)
    scored = tmp_path / "eval.json"
    result = harness_here("eval", "--model", str(out), "--tasks", "STSBenchmark", "--precision", "fp32",
                          "--no-cache", "--no-progress", "--json", str(scored))  # fmt: skip
    assert result.returncode == 0, result.stderr
    spearman = json.loads(scored.read_text())["results"]["STSBenchmark"]["spearman"]
    assert spearman == pytest.approx(
        metrics_of(best)["STSBenchmark.spearman"], abs=0.01
    )  # the best trial's weights

    # the model card: metadata the Hub's parser reads, the scores, the data files with their sha256
    from huggingface_hub import ModelCard

    card = ModelCard.load(out / "README.md")
    assert card.data.library_name == "sentence-transformers" and "base_model" not in card.data.to_dict()
    assert card.data.datasets == ["senteval/SNLI"] and "scl" in card.data.tags
    (result,) = card.data.eval_results  # the final task's main score: STS-B test Spearman
    assert (result.dataset_name, result.metric_type) == ("STSBenchmark", "spearman")
    assert result.metric_value == round(metrics_of(best)["STSBenchmark.spearman"], 4)
    text = card.text
    spearman = metrics_of(best)["STSBenchmark.spearman"]
    assert (
        "Liao" in text
        and f"| STSBenchmark.spearman | {spearman:.4g} | STSBenchmark, test split: Spearman" in text
    )
    snli = (Path(best.data.tags["data_dir"]) / "senteval/SNLI/s1.dev").read_bytes()
    digest = hashlib.sha256(snli).hexdigest()
    assert f"| training | senteval/SNLI/s1.dev | {len(snli)} | {digest} |" in text
    assert "torch 2" in text and best.data.tags["git_commit"] in text

    again = harness_here("export", "exported", "--out", str(out))  # not into a non-empty directory
    assert again.returncode == 2 and "is not an empty directory" in again.stderr
    both = harness_here("export", "exported", "--out", str(tmp_path / "top2"), "--top", "2")
    assert both.returncode == 0, both.stderr
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "top2").iterdir()) == ["rank1", "rank2"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".best", ".top2"))]  # no staging left


@pytest.mark.slow
def test_export_without_saved_models_says_how_to_save_them(tmp_path: Path, tiny_bert: Path) -> None:
    run_study(load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="unsaved", max_steps=1)),
              progress=False)  # fmt: skip
    result = harness_here("export", "unsaved", "--out", str(tmp_path / "x"))
    assert result.returncode == 2 and not (tmp_path / "x").exists()
    assert "saved no model; set save_model: true" in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.slow
def test_save_top_k_keeps_the_best_trials_model_and_exports_it(tmp_path: Path, tiny_bert: Path) -> None:
    """Issue 11 item 7: `save_top_k: 1` saves a trial's encoder only while it is the best so far, so the
    final best has its model; sentence-transformers loads the export and embeds as the harness does."""
    import torch
    import yaml
    from sentence_transformers import SentenceTransformer

    from harness.encoders.encoder import Encoder

    path = Path(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5, 0.9]}, name="topk", max_steps=2,
                           pooling="mean"))  # fmt: skip
    config = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**config, "save_top_k": 1}))
    opt = run_study(load_study(str(path)), progress=False)
    runs = {int(r.data.tags["trial"]): r for r in child_runs("topk")}
    saved = {n for n, r in runs.items() if r.data.tags.get("model_saved", "").startswith("model/")}
    assert opt.best_trial.number in saved
    order = sorted(runs)  # a trial is saved exactly when no earlier trial beat it
    values = {t.number: t.value for t in opt.trials}
    assert saved == {n for n in order if all(values[m] <= values[n] for m in order if m < n)}

    out = tmp_path / "best"
    assert harness_here("export", "topk", "--out", str(out)).returncode == 0
    sentences = ["A man is playing a guitar.", "Two dogs run on the beach.", "short"]
    exported = SentenceTransformer(str(out), device="cpu").encode(sentences, convert_to_tensor=True)
    ours = Encoder(str(out)).eval()
    with torch.no_grad():
        expected = ours.embed(sentences)
    torch.testing.assert_close(exported, expected, rtol=1e-5, atol=1e-6)
