"""`multitask`: vanilla multi-task fine-tuning of the encoder and heads on SST-5, Quora and STS
(the supervised baseline of Chen, David et al. and Phillips); the combiner picks average loss, batch or
epoch round robin, PCGrad, or a single task. One `finetune` stage on the run's schedule."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.methods.paper_defaults import MINBERT, MINBERT_SOURCE
from harness.methods.params import HeadParams
from harness.methods.preset import SINGLE_TASK, Preset, single_task
from harness.registry import register_method


@register_method("multitask")
class MultitaskFinetune(Preset):
    """Heads and the task schedule: multi-task fine-tuning."""

    template = ({"finetune": "multitask"},)
    aliases: ClassVar[dict[str, str]] = {
        "combiner": "finetune.combiner",
        "pcgrad_reduction": "finetune.pcgrad_reduction",
    }
    own_fields: ClassVar[dict[str, tuple[Any, Any]]] = SINGLE_TASK
    groups = (HeadParams,)
    rules = (single_task,)
    run_defaults = MINBERT
    run_defaults_source = MINBERT_SOURCE
