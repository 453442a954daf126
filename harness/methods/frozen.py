"""`frozen`: the encoder stays frozen and only the heads are trained (Phillips' "pretrain" baseline):
one `finetune` stage with `heads_only`."""

from __future__ import annotations

from harness.methods.multitask import MultitaskFinetune
from harness.registry import register_method


@register_method("frozen")
class FrozenEncoder(MultitaskFinetune):
    """Heads and the task schedule, the encoder frozen."""

    template = ({"finetune": "multitask", "heads_only": True},)
