"""`pooling: model`: a sentence-transformers model folder embeds as its own modules.json says (Pooling
mode, then Normalize), equal to `SentenceTransformer.encode`; other module lists are refused with the
fix; a plain Hugging Face folder gets mean pooling (issue 22 item 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.encoders.encoder import Encoder, resolve_model_name
from harness.encoders.save import save_encoder, saved_settings
from harness.errors import HarnessError

SENTENCES = ["A man is playing a guitar.", "Two dogs run through the snow, barking at each other.", "ok"]


def st_encode(folder: str) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(folder, device="cpu").encode(SENTENCES, convert_to_numpy=True)


def harness_encode(model: str, pooling: str = "model") -> tuple[np.ndarray, Encoder]:
    encoder = Encoder(model, pooling, None).eval()
    with torch.no_grad():
        return encoder.embed(SENTENCES).numpy(), encoder


def test_minilm_is_mean_then_normalize_equal_to_sentence_transformers() -> None:
    ours, encoder = harness_encode("all-MiniLM-L6-v2")
    assert (encoder.pooling, encoder.normalize) == ("mean", True)
    assert "mean_tokens, Normalize" in encoder.embedding
    assert ours == pytest.approx(st_encode(resolve_model_name("all-MiniLM-L6-v2")), abs=1e-5)
    assert np.linalg.norm(ours, axis=1) == pytest.approx(1.0, abs=1e-6)
    raw, _ = harness_encode("all-MiniLM-L6-v2", "mean")  # the option that keeps the raw pooler
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-3)


def st_folder(tiny_bert: Path, tmp_path: Path, mode: str, normalize: bool) -> Path:
    """A tiny BERT made into a sentence-transformers model by sentence-transformers itself."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    transformer = models.Transformer(str(tiny_bert), max_seq_length=64)
    modules = [transformer, models.Pooling(32, pooling_mode=mode)]
    folder = tmp_path / f"st-{mode}-{normalize}"
    SentenceTransformer(modules=modules + ([models.Normalize()] if normalize else []), device="cpu").save(
        str(folder)
    )
    return folder


@pytest.mark.parametrize(("mode", "normalize"), [("cls", True), ("cls", False), ("mean", True)])
def test_cls_and_mean_models_equal_sentence_transformers(
    mode: str, normalize: bool, tiny_bert: Path, tmp_path: Path
) -> None:
    folder = st_folder(tiny_bert, tmp_path, mode, normalize)
    ours, encoder = harness_encode(str(folder))
    expected = {"cls": "cls_before_pooler", "mean": "mean"}[mode]
    assert (encoder.pooling, encoder.normalize) == (expected, normalize)
    assert ours == pytest.approx(st_encode(str(folder)), abs=1e-5)


def test_a_folder_without_modules_is_mean_pooled(tiny_bert: Path) -> None:
    ours, encoder = harness_encode(str(tiny_bert))
    assert (encoder.pooling, encoder.normalize) == ("mean", False) and "no sentence-transformers" in (
        encoder.embedding
    )
    assert ours == pytest.approx(harness_encode(str(tiny_bert), "mean")[0], abs=1e-6)


def test_modules_the_harness_does_not_run_are_refused_with_the_fix(tiny_bert: Path, tmp_path: Path) -> None:
    folder = st_folder(tiny_bert, tmp_path, "max", False)
    with pytest.raises(HarnessError, match=r"Pooling mode \(max\).*set pooling"):
        Encoder(str(folder), "model", None)
    dense = tmp_path / "dense"
    shutil.copytree(st_folder(tiny_bert, tmp_path, "mean", False), dense)
    modules = json.loads((dense / "modules.json").read_text())
    modules.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
    (dense / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(HarnessError, match=r"modules \(Dense\).*set pooling"):
        Encoder(str(dense), "model", None)
    assert Encoder(str(dense), "mean", None).pooling == "mean"  # the raw pooler needs no modules


def test_a_normalised_encoder_saves_its_normalize_module(tmp_path: Path) -> None:
    ours, encoder = harness_encode("all-MiniLM-L6-v2")
    assert save_encoder(encoder, tmp_path / "saved")
    assert saved_settings(str(tmp_path / "saved"))["pooling"] == "model"
    assert st_encode(str(tmp_path / "saved")) == pytest.approx(ours, abs=1e-5)
    again, reloaded = harness_encode(str(tmp_path / "saved"))
    assert reloaded.normalize and again == pytest.approx(ours, abs=1e-6)
