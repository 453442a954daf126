"""`fusion`: each batch is trained first on the task loss, then on unsupervised SimCSE over the same
batch's sentences: one `fusion` stage (Chen 4.2 setting 3, the best unsupervised method). The SimCSE
step uses the batch's own sentences, so fusion has no contrastive data or schedule of its own, and the
two steps are separate updates, never projected (PCGrad is refused)."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.methods.paper_defaults import CHEN_SOURCE, CHEN_STRATEGIES
from harness.methods.params import HeadParams, ProjectionParams
from harness.methods.preset import SINGLE_TASK, Preset, single_task
from harness.registry import register_method


@register_method("fusion")
class Fusion(Preset):
    """Heads, the task schedule, SimCSE's temperature and projection."""

    template = ({"fusion": "multitask"},)
    aliases: ClassVar[dict[str, str]] = {"combiner": "fusion.combiner", "temperature": "fusion.temperature"}
    own_fields: ClassVar[dict[str, tuple[Any, Any]]] = SINGLE_TASK
    groups = (HeadParams, ProjectionParams)
    rules = (single_task,)
    run_defaults = CHEN_STRATEGIES
    run_defaults_source = CHEN_SOURCE
