"""`contrastive_first`: a contrastive stage (unsupervised or supervised, on the chosen data), then
multi-task fine-tuning (Chen 3.3 setting 2; David et al.'s UCL / SCL pre-training)."""

from __future__ import annotations

from typing import Any

from harness.methods.composed import ComposedMethod
from harness.registry import register_method
from harness.train.loop import Stage


@register_method("contrastive_first")
class ContrastiveFirst(ComposedMethod):
    def stages(self, config: Any, data: tuple) -> list[Stage]:
        tasks, examples = data
        return [self.contrastive(examples), self.task_stage(config, tasks)]
