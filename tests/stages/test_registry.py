"""harness.stages.registry: the batch orders stages draw (random, length-grouped)."""

import random

from harness.stages.registry import length_grouped, random_batches


def test_every_item_once_and_batches_of_similar_length() -> None:
    items = ["x" * n for n in range(1, 201)]
    batches = length_grouped(items, 10, random.Random(0), len, window=5)
    assert sorted(s for b in batches for s in b) == sorted(items)
    spread = [max(map(len, b)) - min(map(len, b)) for b in batches]
    assert max(spread) < 60  # random batches of 10 from 200 lengths would spread ~150
    assert length_grouped(items, 10, random.Random(0), len, window=5) == batches


def test_random_batches_cover_every_item_once_in_seeded_order() -> None:
    items = list(range(103))
    batches = random_batches(items, 10, random.Random(0))
    assert sorted(i for b in batches for i in b) == items and len(batches) == 11
    assert (
        batches == random_batches(items, 10, random.Random(0)) != random_batches(items, 10, random.Random(1))
    )
