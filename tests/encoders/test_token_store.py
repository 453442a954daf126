"""A stage's sentences tokenized once ahead of its loop (harness.encoders.token_store): the tensors a step
gets are the tokenizer's own, and a remembered sentence is never tokenized again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from harness.encoders.encoder import Encoder
from harness.encoders.token_store import TokenStore, strings
from tests.encoders.test_tokens import SENTENCES, assert_same_tensors


def test_stored_batches_are_the_tokenizers(tokenizer: Any) -> None:
    store = TokenStore(tokenizer, 48)
    store.add(SENTENCES[:2])
    store.add(SENTENCES)  # the first two again: kept once
    assert len(store) == len(SENTENCES)
    listed = [*SENTENCES, *SENTENCES[::-1], SENTENCES[0]]
    theirs = tokenizer(listed, padding=True, truncation=True, max_length=48, return_tensors="pt")
    assert_same_tensors(store.batch(listed), theirs)
    short = SENTENCES[:2]
    wide = tokenizer(short, padding="max_length", truncation=True, max_length=16, return_tensors="pt")
    for widen in (16, lambda longest: 16 if longest <= 16 else 32):  # a width, or a length bucket
        for key, value in store.batch(short, widen).items():
            assert torch.equal(value, wide[key]), key


def test_a_remembered_sentence_is_not_tokenized_again(
    tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = Encoder(str(tiny_bert), "mean", 32)
    listed = [*SENTENCES, *SENTENCES[::-1]]
    before = encoder.tokenize(listed)
    encoder.remember(strings([[(a, b)] for a, b in zip(SENTENCES, SENTENCES[1:], strict=False)]))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("tokenized again")

    monkeypatch.setattr(type(encoder.tokenizer), "__call__", refuse)
    after = encoder.tokenize(listed)
    assert set(after) == set(before) and all(torch.equal(after[k], before[k]) for k in before)
    assert torch.equal(after.index, before.index)  # the real tokens' positions, found on the CPU too
    with pytest.raises(AssertionError, match="tokenized again"):
        encoder.tokenize(["a sentence never remembered"])


def test_strings_walks_sentences_pairs_and_triples_and_skips_the_rest() -> None:
    batches = [["a", "b"], [("p", "h+"), ("q", "h-")], [("s", "t", "u")], [3, 4], [{"ids": [1]}]]
    assert list(strings(batches)) == ["a", "b", "p", "h+", "q", "h-", "s", "t", "u"]
