"""Loss functions, one per module (formula and paper in each docstring), re-exported here."""

from harness.losses.info_nce import info_nce
from harness.losses.nli_supcon import nli_supervised_contrastive, parse_selection
from harness.losses.paired import paired_info_nce
from harness.losses.supcon import supcon
from harness.losses.task import binary_cross_entropy, cross_entropy, mse

__all__ = [
    "binary_cross_entropy",
    "cross_entropy",
    "info_nce",
    "mse",
    "nli_supervised_contrastive",
    "paired_info_nce",
    "parse_selection",
    "supcon",
]
