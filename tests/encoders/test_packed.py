"""The padding-free forward equals transformers' padded forward: outputs and gradients."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.choices import POOLINGS
from harness.encoders.encoder import Encoder, resolve_model_name
from harness.encoders.packed import TokenBatch, dropout, real_tokens

SENTENCES = [
    "a",
    "the cat sat on the mat .",
    "short one",
    "a much longer sentence with many more words in it",
]


def _pair(model: str, pooling: str) -> tuple[Encoder, Encoder]:
    packed, padded = Encoder(model, pooling, 32).eval(), Encoder(model, pooling, 32).eval()
    padded.packing = False
    assert packed.packing
    return packed, padded


@pytest.mark.parametrize("pooling", POOLINGS)
def test_packed_equals_padded_forward_and_gradients(two_layer_bert: Path, pooling: str) -> None:
    packed, padded = _pair(str(two_layer_bert), pooling)
    inputs = packed.tokenize(SENTENCES)
    assert not inputs["attention_mask"].bool().all()  # the batch has padding to skip
    ours, theirs = packed(inputs), padded(inputs)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    ours.square().sum().backward()
    theirs.square().sum().backward()
    for (name, a), (_, b) in zip(packed.named_parameters(), padded.named_parameters(), strict=True):
        if b.grad is None:  # the pooler outside `cls`
            assert a.grad is None or not a.grad.any(), name
            continue
        torch.testing.assert_close(a.grad, b.grad, atol=1e-5, rtol=1e-4, msg=name)


def test_packed_matches_minilm_and_dropout_is_active_in_training() -> None:
    packed, padded = _pair(resolve_model_name("all-MiniLM-L6-v2"), "mean")
    inputs = packed.tokenize(SENTENCES)
    with torch.inference_mode():
        torch.testing.assert_close(packed(inputs), padded(inputs), atol=2e-5, rtol=1e-4)
        packed.train()
        first, second = packed(inputs), packed(inputs)
    assert (first - second).abs().max() > 1e-3  # two dropout passes differ (SimCSE's positives)


def test_a_batch_without_padding_takes_the_reshape_path(two_layer_bert: Path) -> None:
    packed, padded = _pair(str(two_layer_bert), "mean")
    inputs = packed.tokenize(["one two three", "four five six", "seven eight nine"])
    assert inputs["attention_mask"].bool().all()
    torch.testing.assert_close(packed(inputs), padded(inputs), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("sentences", [SENTENCES, ["one two three", "four five six"]])
def test_inputs_without_token_types_are_segment_zero(two_layer_bert: Path, sentences: list[str]) -> None:
    packed, padded = _pair(str(two_layer_bert), "mean")
    inputs = packed.tokenize(sentences)
    without = {key: value for key, value in inputs.items() if key != "token_type_ids"}
    torch.testing.assert_close(packed(without), padded(inputs), atol=1e-5, rtol=1e-5)


def test_dropout_with_p_one_zeroes_everything() -> None:
    module = torch.nn.Dropout(1.0).train()
    x = torch.randn(4, 8)
    assert torch.equal(dropout(x, module), module(x))
    assert not dropout(x, module).isnan().any()


def test_sentence_pairs_are_encoded_jointly_with_segment_ids(two_layer_bert: Path) -> None:
    encoder = Encoder(str(two_layer_bert), "mean", 32).eval()
    first, second = (
        ["a man plays a guitar .", "the cat sat ."],
        ["someone plays music on a stage .", "a dog ran ."],
    )
    with torch.no_grad():
        packed = encoder.embed_pairs(first, second)
        encoder.packing = False
        padded = encoder.embed_pairs(first, second)
        joined = encoder.embed([f"{a} {b}" for a, b in zip(first, second, strict=True)])  # one segment
    torch.testing.assert_close(packed, padded, atol=1e-5, rtol=1e-5)
    assert packed.shape == (2, 32) and not torch.allclose(packed, joined, atol=1e-4)


@pytest.mark.parametrize("sentences", [SENTENCES, ["one two three", "four five six"]])
def test_a_token_batch_carries_the_real_token_positions_worked_out_on_the_cpu(
    two_layer_bert: Path, sentences: list[str]
) -> None:
    """`Encoder.tokenize` gives a TokenBatch whose `index` is what the forward would find from the mask
    (None without padding); the forward gives the same embeddings from it as from a plain dict."""
    packed, _ = _pair(str(two_layer_bert), "mean")
    batch = packed.tokenize(sentences)
    assert isinstance(batch, TokenBatch)
    found = real_tokens(batch["attention_mask"])
    assert (batch.index is None) == (found is None) == (len(set(map(len, sentences))) == 1)
    if found is not None:
        assert torch.equal(batch.index, found)
    assert torch.equal(packed(batch), packed(dict(batch)))


@pytest.mark.slow
def test_the_packed_forward_of_a_token_batch_is_one_graph(two_layer_bert: Path) -> None:
    """Nothing in the packed forward reads tensor values back to Python (a host sync on a GPU): traced by
    torch.compile with `fullgraph=True`, which refuses any graph break, in training mode (dropout) too."""
    packed, _ = _pair(str(two_layer_bert), "mean")
    batch = packed.tokenize(SENTENCES)
    assert batch.index is not None  # the batch has padding: the gather path
    traced = torch.compile(packed.forward, backend="eager", fullgraph=True)
    torch.testing.assert_close(traced(batch), packed(batch))
    packed.train()
    assert traced(batch).shape == (len(SENTENCES), packed.hidden_size)
