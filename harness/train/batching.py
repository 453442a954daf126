"""Batches of examples: random (a shuffled pass, as a PyTorch RandomSampler) or length-grouped (shuffle,
then sort within windows of `window` batches by length, so that each batch holds sentences of similar
length while batch order stays random). BERT encoders run padding-free (`harness.model.packed`), so
grouping no longer buys speed there; it only changes which examples share a batch."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def random_batches(items: Sequence[T], batch_size: int, rng: random.Random) -> list[list[T]]:
    order = list(range(len(items)))
    rng.shuffle(order)
    return [
        [items[i] for i in order[start : start + batch_size]] for start in range(0, len(order), batch_size)
    ]


def length_grouped(
    items: Sequence[T], batch_size: int, rng: random.Random, length: Callable[[T], int], window: int = 50
) -> list[list[T]]:
    order = list(range(len(items)))
    rng.shuffle(order)
    span = batch_size * window
    batches: list[list[T]] = []
    for start in range(0, len(order), span):
        chunk = sorted(order[start : start + span], key=lambda i: length(items[i]))
        batches += [[items[i] for i in chunk[j : j + batch_size]] for j in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches
