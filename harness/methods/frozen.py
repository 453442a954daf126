"""`frozen`: the encoder stays frozen and only the heads are trained (Phillips' "pretrain" baseline):
one `finetune` stage with `heads_only`.

Paper defaults: the minBERT baseline's (`MINBERT`, as `multitask`) with Phillips' learning rate for this
baseline, 4.3.1: "learning rate 1e-3 for pretrained weights and 1e-5 for model finetuning" (the
"pretrained weights" model is Table 1's "Pretrain" column, the heads-only baseline of 3.3)."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.methods.multitask import MultitaskFinetune
from harness.methods.paper_defaults import MINBERT, MINBERT_SOURCE
from harness.registry import register_method


@register_method("frozen")
class FrozenEncoder(MultitaskFinetune):
    """Heads and the task schedule, the encoder frozen."""

    template = ({"finetune": "multitask", "heads_only": True},)
    run_defaults: ClassVar[dict[str, Any]] = {**MINBERT, "lr": 1e-3}
    run_defaults_source = (
        'Phillips 4.3.1 (lr 1e-3: "learning rate 1e-3 for pretrained weights"); the rest as multitask: '
        + MINBERT_SOURCE
    )
