"""`contrastive_first`: a contrastive stage (unsupervised or supervised, on the chosen data, with its own
`contrastive_*` schedule), then multi-task fine-tuning on the run's schedule (Chen 4.2 setting 2; David
et al.'s UCL / SCL pre-training). For several contrastive stages write `method: pipeline`."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.methods.paper_defaults import CHEN_SOURCE, CHEN_STRATEGIES
from harness.methods.params import HeadParams, ProjectionParams
from harness.methods.preset import (
    COMPOSED_CONTRASTIVE,
    COMPOSED_CONTRASTIVE_STAGE,
    SINGLE_TASK,
    Preset,
    single_task,
)
from harness.registry import register_method


@register_method("contrastive_first")
class ContrastiveFirst(Preset):
    """Heads, the task schedule and a contrastive stage with its own schedule, trained first."""

    template = (COMPOSED_CONTRASTIVE_STAGE, {"finetune": "multitask"})
    aliases: ClassVar[dict[str, str]] = {**COMPOSED_CONTRASTIVE, "combiner": "finetune.combiner"}
    own_fields: ClassVar[dict[str, tuple[Any, Any]]] = SINGLE_TASK
    groups = (HeadParams, ProjectionParams)
    rules = (single_task,)
    run_defaults = CHEN_STRATEGIES
    run_defaults_source = CHEN_SOURCE
