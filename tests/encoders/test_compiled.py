"""The compiled training forward (harness.encoders.compiled): length buckets, the padded form against the
padding-free one, and torch.compile (on the CPU here; CUDA graphs: tests/test_cuda.py) within float
rounding of the eager step."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.encoders.compiled import bucket, compile_choice, length_buckets, resolve_compile
from harness.encoders.encoder import Encoder

SENTENCES = [
    "a",
    "the cat sat on the mat .",
    "short one",
    "a much longer sentence with many more words in it",
]


def test_buckets_are_quarters_of_the_max_length_in_multiples_of_8() -> None:
    assert length_buckets(32) == [8, 16, 24, 32]
    assert length_buckets(128) == [32, 64, 96, 128]
    assert length_buckets(20) == [8, 16, 20]  # never past the max length
    assert [bucket(n, [8, 16, 24, 32]) for n in (1, 8, 9, 24, 25, 32)] == [8, 8, 16, 24, 32, 32]


def test_auto_compiles_on_cuda_only() -> None:
    assert resolve_compile("auto", torch.device("cuda")) and not resolve_compile("auto", torch.device("cpu"))
    assert resolve_compile(True, torch.device("cpu")) and not resolve_compile(False, torch.device("cuda"))


@pytest.mark.parametrize("pooling", ["mean", "cls", "first_last_avg"])
@pytest.mark.parametrize("sentences", [SENTENCES, SENTENCES[1:2] * 3], ids=["padded", "unpadded"])
def test_the_padded_form_with_drawn_masks_is_the_padding_free_forward(
    two_layer_bert: Path, pooling: str, sentences: list[str]
) -> None:
    """A batch padded to its length bucket, every position computed, with the dropout masks
    `dropout_masks` draws, gives the padding-free forward's embeddings of the same batch at the same RNG
    state, dropout on (0.1 everywhere, attention probabilities too), to float rounding: the compiled step
    trains with the eager step's masks."""
    from harness.encoders.packed import dropout_masks

    encoder = Encoder(str(two_layer_bert), pooling, 32)
    encoder.set_dropout(0.1)
    encoder.train()
    torch.manual_seed(3)
    eager = encoder(encoder.tokenize(sentences))
    encoder.buckets = [8, 16, 24, 32]
    batch = encoder.tokenize(sentences)
    assert batch["input_ids"].shape[1] in encoder.buckets
    torch.manual_seed(3)
    masks = dropout_masks(encoder.model, batch)
    assert len(masks) == 1 + 3 * 2  # embeddings; per layer attention, its output, feed-forward
    padded = encoder.padded_forward(
        batch["input_ids"], batch["attention_mask"], batch["token_type_ids"], masks
    )
    torch.testing.assert_close(padded, eager, rtol=1e-5, atol=1e-5)
    torch.manual_seed(4)
    assert not torch.allclose(encoder(encoder.tokenize(sentences)), eager)  # other draws: other masks


@pytest.mark.slow
def test_a_compiled_training_step_matches_the_eager_one(two_layer_bert: Path) -> None:
    """`compile: true` on the CPU: training batches padded to a bucket, the forward compiled by inductor,
    dropout on; embeddings and gradients as the eager padding-free step's at the same RNG state within
    float rounding (the compiled step takes the masks drawn for it); evaluation stays eager."""
    torch.manual_seed(0)
    compiled, eager = Encoder(str(two_layer_bert), "mean", 32), Encoder(str(two_layer_bert), "mean", 32)
    eager.load_state_dict(compiled.state_dict())
    for encoder in (compiled, eager):
        encoder.train()
    assert compile_choice(compiled, True, torch.device("cpu")) == "on (compile: true), default"
    assert compile_choice(eager, "auto", torch.device("cpu")) == "off (auto: cpu)"
    batch = compiled.tokenize(SENTENCES)
    assert batch["input_ids"].shape[1] == 16  # 12 tokens, padded to the bucket of 16
    torch.manual_seed(5)
    ours = compiled(batch)
    ours.square().sum().backward()
    torch.manual_seed(5)  # dropout on: the eager padding-free step draws the same masks
    theirs = eager(eager.tokenize(SENTENCES))
    theirs.square().sum().backward()
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
    for (name, a), b in zip(compiled.named_parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-3, atol=1e-5, msg=name)
    compiled.eval()
    assert compiled.tokenize(SENTENCES)["input_ids"].shape[1] == 12  # evaluation: no bucket, eager
