"""`supervised_first`: multi-task fine-tuning, then a contrastive stage (Chen 3.3 setting 1)."""

from __future__ import annotations

from typing import Any

from harness.methods.composed import ComposedMethod
from harness.registry import register_method
from harness.train.loop import Stage


@register_method("supervised_first")
class SupervisedFirst(ComposedMethod):
    def stages(self, config: Any, data: tuple) -> list[Stage]:
        tasks, examples = data
        return [self.task_stage(config, tasks), self.contrastive(examples)]
