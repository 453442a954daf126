"""A stage's sentences tokenized once ahead of its loop (harness.model.token_store): the tensors a step gets
are the tokenizer's own, and a remembered sentence is never tokenized again."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer

from harness.model.encoder import Encoder, resolve_model_name
from harness.model.token_store import TokenStore, strings

SENTENCES = ["A man plays a guitar.", "Two dogs run.", "", "x " * 80, "Ünïcödé — text, with punctuation!"]


@pytest.mark.parametrize("model", ["bert", "all-MiniLM-L6-v2"])
@pytest.mark.parametrize("side", ["right", "left"])
def test_stored_batches_are_the_tokenizers(model: str, side: str, tiny_bert: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert if model == "bert" else resolve_model_name(model))
    tokenizer.padding_side = side
    store = TokenStore(tokenizer, 48)
    store.add(SENTENCES[:2])
    store.add(SENTENCES)  # the first two again: kept once
    assert len(store) == len(SENTENCES)
    listed = [*SENTENCES, *SENTENCES[::-1], SENTENCES[0]]
    theirs = tokenizer(listed, padding=True, truncation=True, max_length=48, return_tensors="pt")
    ours = store.batch(listed)
    assert set(ours) == set(theirs)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype == torch.int64
        assert torch.equal(ours[key], theirs[key]), key
    short = SENTENCES[:2]
    wide = tokenizer(short, padding="max_length", truncation=True, max_length=16, return_tensors="pt")
    for key, value in store.batch(short, pad_to=16).items():  # padded to a length bucket
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
