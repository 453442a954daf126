"""Padding equal to the tokenizer's own, and token ids made once per process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from harness.encoders.encoder import Encoder
from harness.encoders.tokens import TokenIdCache, pad, pad_values

SENTENCES = ["A man plays a guitar.", "Two dogs run.", "", "x " * 80, "Ünïcödé — text, with punctuation!"]


def assert_same_tensors(ours: dict[str, torch.Tensor], theirs: Any) -> None:
    """The same keys, each an int64 tensor equal to the tokenizer's."""
    assert set(ours) == set(theirs)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype == torch.int64
        assert torch.equal(ours[key], theirs[key]), key


def test_pad_equals_the_tokenizers_pad(tokenizer: Any) -> None:
    features = dict(tokenizer(SENTENCES, truncation=True, max_length=48, return_special_tokens_mask=True))
    theirs = tokenizer.pad(features, padding=True, return_tensors="pt")
    assert_same_tensors(pad(features, pad_values(tokenizer), tokenizer.padding_side), theirs)


def test_the_cache_tokenizes_a_list_once_per_identity() -> None:
    cache, made = TokenIdCache(keep=2), []

    def make(tag: str) -> dict[str, list[list[int]]]:
        made.append(tag)
        return {"input_ids": [[len(made)]]}

    first = cache.get(("tok", 32), ["a", "b"], lambda: make("a"))
    assert cache.get(("tok", 32), ["a", "b"], lambda: make("again")) is first
    cache.get(("tok", 48), ["a", "b"], lambda: make("longer"))  # another max length: its own ids
    cache.get(("tok", 32), ["a", "b"], lambda: make("again"))  # a hit, now the most recent
    cache.get(("tok", 32), ["c"], lambda: make("c"))  # evicts the least recent, (tok, 48)
    cache.get(("tok", 32), ["a", "b"], lambda: make("kept"))
    cache.get(("tok", 48), ["a", "b"], lambda: make("evicted"))
    assert made == ["a", "longer", "c", "evicted"]


def test_an_encoders_token_ids_are_the_tokenizers_and_shared_between_encoders(tiny_bert: Path) -> None:
    one, two = Encoder(str(tiny_bert), "mean", 16), Encoder(str(tiny_bert), "cls", 16)
    ids = one.token_ids(SENTENCES)
    assert ids == {k: list(v) for k, v in one.tokenizer(SENTENCES, truncation=True, max_length=16).items()}
    assert two.token_ids(SENTENCES) is ids  # same tokenizer files and length: tokenized once
    assert Encoder(str(tiny_bert), "mean", 8).token_ids(SENTENCES) is not ids


def test_a_batch_with_repeated_sentences_tokenizes_as_the_tokenizer_does(tiny_bert: Path) -> None:
    """Encoder.tokenize tokenizes each distinct sentence once (SimCSE's two views repeat all of them) and
    must give exactly the tensors of tokenizing the whole list."""
    encoder = Encoder(str(tiny_bert), "mean", 32)
    listed = [*SENTENCES, *SENTENCES[::-1], SENTENCES[0]]
    theirs = encoder.tokenizer(listed, padding=True, truncation=True, max_length=32, return_tensors="pt")
    ours = encoder.tokenize(listed)
    assert set(ours) == set(theirs)
    for key in theirs:
        assert torch.equal(ours[key], theirs[key]), key
