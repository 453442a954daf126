"""encode: each distinct sentence once, in token-count-sorted batches, the model's mode restored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from harness.encoders.encoder import Encoder
from harness.evaluate.encode import encode, length_sorted_batches


def test_batches_are_longest_first_and_ties_keep_their_order() -> None:
    assert length_sorted_batches([2, 5, 2, 7, 5], 2) == [[3, 1], [4, 0], [2]]


def test_encode_gives_each_distinct_sentence_its_own_embedding(tiny_bert: Path) -> None:
    encoder = Encoder(str(tiny_bert), "mean", 32).train()
    sentences = ["b c d", "a", "b c d", "e f", "a"]
    out = encode(encoder, sentences, batch_size=2)
    assert sorted(out) == ["a", "b c d", "e f"]
    assert encoder.training  # restored after the eval-mode pass
    with torch.inference_mode():
        alone = encoder.eval()(encoder.tokenize(["e f"]))[0].numpy()
    np.testing.assert_allclose(out["e f"], alone, atol=1e-5)


def test_each_embedding_goes_to_its_own_sentence_across_length_sorted_batches(tiny_bert: Path) -> None:
    """The longest sentence comes last alphabetically, so its batch runs in another order than the
    sentences' own; every sentence still gets the embedding it has when encoded alone (eval mode)."""
    encoder = Encoder(str(tiny_bert), "mean", 32)
    sentences = ["a", "b c", "z y x w"]
    out = encode(encoder, sentences, batch_size=2)
    with torch.inference_mode():
        for sentence in sentences:
            alone = encoder.eval()(encoder.tokenize([sentence]))[0].numpy()
            np.testing.assert_allclose(out[sentence], alone, atol=1e-5)


def test_encode_of_nothing_is_empty(tiny_bert: Path) -> None:
    assert encode(Encoder(str(tiny_bert), "mean", 32), []) == {}
