"""Adding a method, a contrastive variety and a loss touches the files the README says: here each is
written as a researcher would write its one file (registered for this test only), and a study of the new
method runs end to end, its new loss the one that trains."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
import torch
import torch.nn.functional as F

from harness.methods.preset import CONTRASTIVE_FIELDS, Preset
from harness.registry import METHODS, register_method
from harness.resolve.study_spec import load_study
from harness.stages.contrastive import CONTRASTIVE, ContrastiveStage, register_contrastive
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from tests.helpers import child_runs, tiny_study

CALLS: list[int] = []


def alignment_loss(anchors: torch.Tensor, positives: torch.Tensor) -> torch.Tensor:
    """A new loss (harness/losses/<name>.py): mean squared distance of normalised pairs (Wang and Isola
    2020's alignment), 2 - 2 cos."""
    CALLS.append(len(anchors))
    return (F.normalize(anchors, dim=-1) - F.normalize(positives, dim=-1)).pow(2).sum(-1).mean()


@pytest.fixture
def new_method() -> Iterator[str]:
    @register_contrastive("test_aligned")
    class Aligned(ContrastiveStage):  # a new variety (harness/stages/contrastive/<name>.py)
        contrastive: Literal["test_aligned"] = "test_aligned"

        def examples(self, sources):  # noqa: ANN001, ANN202
            return sorted(set(sources.tasks().sts_train.first))[:32]

        def loss(self, ctx, batch):  # noqa: ANN001, ANN202
            z = ctx.project(list(batch) + [s.lower() for s in batch])
            return {"loss": alignment_loss(z[: len(batch)], z[len(batch) :])}

    @register_method("test_aligned_simcse")
    class AlignedSimCSE(Preset):  # a new method (harness/methods/<name>.py): a preset over the variety
        """Alignment of each sentence with its lower-cased self."""

        template = ({"contrastive": "test_aligned"},)
        aliases: ClassVar[dict[str, str]] = dict(CONTRASTIVE_FIELDS)
        run_defaults: ClassVar[dict[str, Any]] = {"lr": 1e-4}
        run_defaults_source = "this test"

    yield "test_aligned_simcse"
    METHODS._entries.pop("test_aligned_simcse")
    CONTRASTIVE._entries.pop("test_aligned")


@pytest.mark.slow
def test_a_new_method_variety_and_loss_run_a_study(new_method: str, tmp_path: Path, tiny_bert: Path) -> None:
    CALLS.clear()
    base = {"method": new_method, "batch_size": 8, "max_steps": 2, "eval_every": 2}
    study = load_study(tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="aligned", **base))
    opt = run_study(study, progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE"], opt.trials[0].user_attrs
    (run,) = child_runs("aligned")
    assert run.data.tags["method"] == new_method and run.data.params["lr"] == "0.0001"  # its paper default
    assert CALLS == [8, 8] and metrics_of(run)["train.steps"] == 2  # two updates, each the new loss
    assert 0 <= metrics_of(run)["train.loss"] <= 4  # 2 - 2 cos lies in [0, 4]
