"""The compiled training forward (harness.model.compiled): length buckets, the padded form against the
padding-free one, and torch.compile (on the CPU here; CUDA graphs: tests/test_cuda.py) within float
rounding of the eager step."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.model.compiled import bucket, compile_choice, length_buckets, resolve_compile
from harness.model.encoder import Encoder

SENTENCES = ["a", "the cat sat on the mat .", "short one", "a much longer sentence with many more words in it"]


def test_buckets_are_quarters_of_the_max_length_in_multiples_of_8() -> None:
    assert length_buckets(32) == [8, 16, 24, 32]
    assert length_buckets(128) == [32, 64, 96, 128]
    assert length_buckets(20) == [8, 16, 20]  # never past the max length
    assert [bucket(n, [8, 16, 24, 32]) for n in (1, 8, 9, 24, 25, 32)] == [8, 8, 16, 24, 32, 32]


def test_auto_compiles_on_cuda_only() -> None:
    assert resolve_compile("auto", torch.device("cuda")) and not resolve_compile("auto", torch.device("cpu"))
    assert resolve_compile(True, torch.device("cpu")) and not resolve_compile(False, torch.device("cuda"))


@pytest.mark.parametrize("pooling", ["mean", "cls", "first_last_avg"])
def test_the_padded_form_is_the_padding_free_forward(two_layer_bert: Path, pooling: str) -> None:
    """Every position computed with the padded keys masked gives the padding-free forward's embeddings
    (dropout off: the two forms draw their masks over other shapes), to float rounding."""
    encoder = Encoder(str(two_layer_bert), pooling, 32)
    encoder.set_dropout(0.0)
    encoder.train()
    batch = encoder.tokenize(SENTENCES)
    eager = encoder(batch)
    padded = encoder.padded_forward(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    torch.testing.assert_close(padded, eager, rtol=1e-5, atol=1e-5)


@pytest.mark.slow
def test_a_compiled_training_step_matches_the_eager_one(two_layer_bert: Path) -> None:
    """`compile: true` on the CPU: training batches padded to a bucket, the forward compiled by inductor;
    embeddings and gradients as the eager padded step's within float rounding; evaluation stays eager."""
    torch.manual_seed(0)
    compiled, eager = Encoder(str(two_layer_bert), "mean", 32), Encoder(str(two_layer_bert), "mean", 32)
    eager.load_state_dict(compiled.state_dict())
    for encoder in (compiled, eager):
        encoder.set_dropout(0.0)
        encoder.train()
    assert compile_choice(compiled, True, torch.device("cpu")) == "on (compile: true), default"
    assert compile_choice(eager, "auto", torch.device("cpu")) == "off (auto: cpu)"
    batch = compiled.tokenize(SENTENCES)
    assert batch["input_ids"].shape[1] == 16  # 12 tokens, padded to the bucket of 16
    ours = compiled(batch)
    ours.square().sum().backward()
    theirs = eager.padded_forward(batch["input_ids"], batch["attention_mask"], batch["token_type_ids"])
    theirs.square().sum().backward()
    torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
    for (name, a), b in zip(compiled.named_parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-3, atol=1e-5, msg=name)
    compiled.eval()
    assert compiled.tokenize(SENTENCES)["input_ids"].shape[1] == 12  # evaluation: no bucket, eager
