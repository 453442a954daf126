"""`supervised_first`: multi-task fine-tuning, then a contrastive stage (Chen 4.2 setting 1)."""

from __future__ import annotations

from harness.methods.contrastive_first import ContrastiveFirst
from harness.methods.preset import COMPOSED_CONTRASTIVE_STAGE
from harness.registry import register_method


@register_method("supervised_first")
class SupervisedFirst(ContrastiveFirst):
    """Heads, the task schedule and a contrastive stage with its own schedule, trained after them."""

    template = ({"finetune": "multitask"}, COMPOSED_CONTRASTIVE_STAGE)
