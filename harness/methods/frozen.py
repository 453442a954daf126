"""`frozen`: the encoder stays frozen and only the heads are trained (Phillips' "pretrain" baseline)."""

from __future__ import annotations

from typing import Any

from harness.data.cs224n import MultitaskData
from harness.methods.tasks import TaskMethod
from harness.registry import register_method
from harness.train.loop import Stage


@register_method("frozen")
class FrozenEncoder(TaskMethod):
    def stages(self, config: Any, data: MultitaskData) -> list[Stage]:
        return [self.task_stage(config, data, heads_only=True)]
