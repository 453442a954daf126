"""How a contrastive stage over several data sets draws its batches (issue 56 items 1-2): pooled over
every example (the default), an epoch of the smallest data set (Phillips 3.3), or concurrent, one batch of
each data set a step (David et al. 3.1, 4.2.2)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import torch

from harness.config import RunConfig
from harness.stages.registry import StageSources, parse_stage


def _stage(data_dir: Path, **fields: object) -> tuple[object, object]:
    spec = parse_stage({"contrastive": "unsup", "data": ["sst", "quora", "sts"], **fields})
    sources = StageSources(data_dir)
    data = spec.load(sources)
    return spec.build(None, RunConfig(batch_size=8), data), sources  # no step is taken: no modules


def test_pooled_epochs_pass_over_every_sentence(data_dir: Path) -> None:
    stage, sources = _stage(data_dir)
    sentences = len(parse_stage({"contrastive": "unsup", "data": ["sst", "quora", "sts"]}).examples(sources))
    assert len(stage.make_batches(random.Random(0))) == math.ceil(sentences / 8)


def test_an_epoch_of_the_smallest_data_set_is_stss_rows_in_batches(data_dir: Path) -> None:
    """Phillips: 10 epochs of ceil(6,040 / 8) = 755 steps, from a fresh shuffle of the pooled sentences."""
    stage, sources = _stage(data_dir, epoch_size="smallest")
    assert len(sources.tasks().sts_train) == 6040 < len(sources.tasks().sst_train)
    first, second = stage.make_batches(random.Random(0)), stage.make_batches(random.Random(1))
    assert len(first) == len(second) == 755 and first != second
    pooled = {
        s for source in ("sst", "quora", "sts") for s in _stage(data_dir)[0].make_batches(random.Random(2))[0]
    }
    assert pooled  # the pool is the same sentences either way


def test_concurrent_steps_take_one_batch_of_each_data_set(data_dir: Path) -> None:
    stage, sources = _stage(data_dir, mixing="concurrent")
    steps = stage.make_batches(random.Random(0))
    assert len(steps) == 755
    own = {
        name: set(parse_stage({"contrastive": "unsup", "data": [name]}).examples(sources))
        for name in ("sst", "quora", "sts")
    }
    for step in steps[:50]:
        assert [name for name, _ in step] == ["sst", "quora", "sts"]
        assert all(set(batch) <= own[name] and len(batch) == 8 for name, batch in step)


def test_a_concurrent_steps_loss_is_the_mean_of_each_data_sets_own(data_dir: Path, tiny_bert: Path) -> None:
    from harness.encoders.encoder import Encoder
    from harness.stages.registry import StageContext

    spec = parse_stage({"contrastive": "unsup", "data": ["sst", "sts"], "mixing": "concurrent"})
    encoder = Encoder(str(tiny_bert), "mean", 32).eval()  # no dropout: the same embeddings each call
    ctx = StageContext(encoder=encoder, projection=None)
    stage = spec.build(ctx, RunConfig(batch_size=8), spec.load(StageSources(data_dir)))
    step = stage.make_batches(random.Random(0))[0]
    parts = stage.updates[0](step)
    alone = [spec.loss(ctx, batch)["loss"] for _, batch in step]
    assert torch.allclose(parts["loss"], (alone[0] + alone[1]) / 2)
    assert torch.allclose(parts["loss_unsup_sst"], alone[0])  # not the fine-tuning stage's loss_sst


def test_a_share_of_the_examples_and_an_epoch_of_the_smallest_set_are_refused_together() -> None:
    with pytest.raises(ValueError, match="fraction cannot be used with mixing: concurrent"):
        parse_stage({"contrastive": "unsup", "data": ["sst", "sts"], "mixing": "concurrent", "fraction": 0.1})
