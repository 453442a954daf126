"""`fusion` stages (Chen 4.2 setting 3, the best unsupervised method): each batch is trained first on the
task loss, then on unsupervised SimCSE over the same batch's sentences: two optimizer steps per
batch. The two steps are separate updates, so a combiner that projects gradients (PCGrad) is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import model_validator

from harness.data.cs224n import MultitaskData
from harness.fields import TemperatureField
from harness.stages.contrastive import simcse_loss
from harness.stages.finetune import Tasks, TaskStage
from harness.stages.registry import StageContext, register_stage
from harness.train.combiners import COMBINERS

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.train.loop import Stage


def step_sentences(step: dict[str, list[int]], data: MultitaskData) -> list[str]:
    """Every sentence of a multi-task step: SST texts, both sides of Quora and STS pairs."""
    sentences: list[str] = []
    for task, rows in step.items():
        if task == "sst":
            sentences += [data.sst_train.texts[i] for i in rows]
        else:
            pairs = data.quora_train if task == "quora" else data.sts_train
            sentences += [pairs.first[i] for i in rows] + [pairs.second[i] for i in rows]
    return sentences


@register_stage("fusion")
class FusionStage(TaskStage, TemperatureField):
    needs_projection = True

    fusion: Tasks

    @model_validator(mode="after")
    def _no_projected_gradients(self) -> FusionStage:
        if self.heads_only:
            raise ValueError("heads_only cannot be used with fusion (its SimCSE step trains the encoder)")
        if COMBINERS[self.combiner].backward != "sum":
            raise ValueError(
                f"combiner '{self.combiner}' cannot be used with fusion (its task and SimCSE steps are "
                "separate updates); choose average, batch_round_robin, epoch_round_robin or single"
            )
        return self

    def build(self, ctx: StageContext, settings: RunConfig, data: MultitaskData) -> Stage:
        stage = super().build(ctx, settings, data)
        stage.name = "fusion"
        simcse = lambda step: simcse_loss(ctx, step_sentences(step, data), self.temperature)  # noqa: E731
        stage.updates = [*stage.updates, simcse]
        return stage
