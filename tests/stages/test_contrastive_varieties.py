"""A contrastive objective is one `ContrastiveStage` subclass registered by name: its fields, its examples,
its loss. The one below (registered for this test only) pairs each STS sentence with its lower-cased self."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
import torch

from harness.config import RunConfig
from harness.encoders.encoder import Encoder
from harness.errors import HarnessError
from harness.resolve.run_spec import resolve_run
from harness.stages.contrastive import CONTRASTIVE, ContrastiveStage, register_contrastive
from harness.stages.contrastive.base import info_nce_loss


@pytest.fixture
def lowercase_variety() -> type[ContrastiveStage]:
    @register_contrastive("test_lowercase")
    class Lowercase(ContrastiveStage):
        contrastive: Literal["test_lowercase"] = "test_lowercase"
        max_sentences: int = 40

        def examples(self, sources):  # noqa: ANN001, ANN202
            return sorted(set(sources.tasks().sts_train.first))[: self.max_sentences]

        def loss(self, ctx, batch):  # noqa: ANN001, ANN202
            return info_nce_loss(ctx, [batch, [s.lower() for s in batch]], self.temperature)

    yield Lowercase
    CONTRASTIVE._entries.pop("test_lowercase")


def test_a_new_variety_is_one_class(lowercase_variety: type, tiny_bert: Path, data_dir: Path) -> None:
    stages = [{"contrastive": "test_lowercase", "max_sentences": 16, "temperature": 0.1, "batch_size": 8}]
    run = resolve_run({"method": "pipeline", "model": str(tiny_bert), "stages": stages})
    (spec,) = run.stages
    assert type(spec) is lowercase_variety and run.scorer.name == "sts"
    assert run.flat()["stages"] == [{"contrastive": "test_lowercase", "batch_size": 8, "temperature": 0.1,
                                     "epoch_size": "all", "mixing": "pooled", "length_grouping": False,
                                     "max_sentences": 16}]  # fmt: skip
    model = run.build(Encoder(str(tiny_bert), "mean", 32))
    data = spec.load(run.sources(data_dir))
    assert len(data) == 16
    stage = spec.build(model.context(), RunConfig(), data)
    loss = stage.updates[0](data[:8])["loss"]
    assert loss.ndim == 0 and torch.isfinite(loss) and loss.requires_grad
    with pytest.raises(HarnessError, match="'min_similarity' is not read by a 'test_lowercase' contrastive"):
        resolve_run(
            {"method": "pipeline", "stages": [{"contrastive": "test_lowercase", "min_similarity": 3}]}
        )


def test_an_unknown_variety_lists_the_known_ones() -> None:
    with pytest.raises(HarnessError, match="unknown contrastive variety 'unsupervised'; known: sup_nli, "):
        resolve_run({"method": "pipeline", "stages": [{"contrastive": "unsupervised"}]})
