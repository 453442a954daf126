"""Contrastive stage varieties, one file each; importing a variety registers it (see base.py)."""

from harness.stages.contrastive import sup_nli, sup_pairs, sup_quora, unsup  # noqa: F401
from harness.stages.contrastive.base import CONTRASTIVE, ContrastiveStage, register_contrastive
from harness.stages.contrastive.sup_quora import with_shuffled_negatives
from harness.stages.contrastive.unsup import simcse_loss

__all__ = [
    "CONTRASTIVE",
    "ContrastiveStage",
    "register_contrastive",
    "simcse_loss",
    "with_shuffled_negatives",
]
