"""`fusion`: each batch is trained first on the task objective, then on unsupervised SimCSE over the same
batch's sentences: two optimizer steps per batch (Chen 3.3 setting 3, the best unsupervised method)."""

from __future__ import annotations

from typing import Any

from harness.data.cs224n import MultitaskData
from harness.methods.composed import ComposedMethod
from harness.registry import register_method
from harness.train.loop import Stage


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
class Fusion(ComposedMethod):
    def stages(self, config: Any, data: tuple) -> list[Stage]:
        tasks, _ = data
        stage = self.task_stage(config, tasks)
        stage.name = "fusion"
        stage.updates = [*stage.updates, lambda step: self.unsup_loss(step_sentences(step, tasks))]
        stage.combine = "sum"
        return [stage]
