"""`fusion`: each batch is trained first on the task objective, then on unsupervised SimCSE over the same
batch's sentences: two optimizer steps per batch (Chen 3.3 setting 3, the best unsupervised method).
The SimCSE step uses the batch's own sentences, so fusion has no contrastive data or schedule of its
own, and the two steps are summed, never projected (PCGrad is refused)."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from harness.data.cs224n import MultitaskData
from harness.methods.contrastive import ContrastiveMixin
from harness.methods.params import MultitaskParams, SimCSEParams
from harness.methods.tasks import TaskMethod
from harness.model.encoder import Encoder
from harness.registry import register_method
from harness.train.loop import Stage


class FusionParams(MultitaskParams, SimCSEParams):
    @model_validator(mode="after")
    def _no_pcgrad(self) -> FusionParams:
        if self.combiner == "pcgrad":
            raise ValueError(
                "combiner 'pcgrad' cannot be used with fusion (its task and SimCSE steps are separate "
                "updates); choose average, batch_round_robin, epoch_round_robin or single"
            )
        return self


def step_sentences(step: dict[str, list[int]], data: MultitaskData) -> list[str]:
    sentences: list[str] = []
    for task, rows in step.items():
        if task == "sst":
            sentences += [data.sst_train.texts[i] for i in rows]
        else:
            pairs = data.quora_train if task == "quora" else data.sts_train
            sentences += [pairs.first[i] for i in rows] + [pairs.second[i] for i in rows]
    return sentences


@register_method("fusion")
class Fusion(ContrastiveMixin, TaskMethod):
    Params = FusionParams

    def __init__(self, encoder: Encoder, params: FusionParams) -> None:
        TaskMethod.__init__(self, encoder, params)
        self.init_contrastive(params)

    def stages(self, config: Any, data: MultitaskData) -> list[Stage]:
        stage = self.task_stage(config, data)
        stage.name = "fusion"
        stage.updates = [*stage.updates, lambda step: self.unsup_loss(step_sentences(step, data))]
        return [stage]
