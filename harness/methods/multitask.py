"""`multitask`: vanilla multi-task fine-tuning of the encoder and heads on SST-5, Quora and STS
(the supervised baseline of Chen, David et al. and Phillips); the combiner picks average loss, batch or
epoch round robin, PCGrad, or a single task."""

from __future__ import annotations

from typing import Any

from harness.data.cs224n import MultitaskData
from harness.methods.tasks import TaskMethod
from harness.registry import register_method
from harness.train.loop import Stage


@register_method("multitask")
class MultitaskFinetune(TaskMethod):
    def stages(self, config: Any, data: MultitaskData) -> list[Stage]:
        return [self.task_stage(config, data)]
