"""SupCL-Seq's dropout views (Sedghamiz et al., 2021, section 2 and Fig. 1): the batch is forwarded N
times through the same encoder, pass n with every dropout probability set to p_n, x~_n = Enc(x, p_n);
with `normalize` each view is L2-normalised (footnote 2), and the supervised contrastive loss (SupCL-Seq
eq. 2, harness.losses.supcon) takes the B x N views, same label = positive.

The authors' code adds one pass at the model's default dropout before the listed ones
(hooman650/SupCL-Seq@320440f src/SupCsTrainer.py:66, then one per `w_drop_out` entry, :76) and scales
the loss by tau / 0.07 (:211, :132): `default_view` and `base_temperature` reproduce those. After the
passes every dropout is set back to the model's own (the code sets 0.1 back, :94)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import torch
from pydantic import BaseModel, Field
from torch import nn

from harness.fields import Probabilities
from harness.losses import supcon

T = TypeVar("T")


class DropoutViewFields(BaseModel):
    """The fields of a SupCL-Seq stage (the `supcl_seq` method's, the `glue_supcon` stage kind's)."""

    views: Probabilities = Field(default_factory=lambda: [0.0, 0.1, 0.2], min_length=2)
    temperature: float = Field(0.05, gt=0)
    normalize: bool = Field(True, description="L2-normalise the views (footnote 2); false: raw inner product")
    default_view: bool = Field(False, description="the authors' code: one more view at the model's dropout")
    base_temperature: float | None = Field(None, gt=0, description="the authors' code: loss x tau / 0.07")


def model_dropout(encoder: Any) -> float:
    """The probability of the transformer's first dropout layer (BERT's 0.1; 0.1 when it has none)."""
    return next((m.p for m in encoder.model.modules() if isinstance(m, nn.Dropout)), 0.1)


def dropout_passes(encoder: Any, probabilities: list[float], forward: Callable[[], T]) -> list[T]:
    """`forward()` once per probability with every encoder dropout set to it; then the model's own."""
    own = model_dropout(encoder)
    outputs = []
    try:
        for probability in probabilities:
            encoder.set_dropout(probability)
            outputs.append(forward())
    finally:
        encoder.set_dropout(own)
    return outputs


def supcon_views(
    encoder: Any, fields: DropoutViewFields, embed: Callable[[], torch.Tensor], labels: torch.Tensor
) -> torch.Tensor:
    """supcon(stack_n Enc(x, p_n), y): the views [B, N, d] of `embed()`, the code's default-dropout view
    first with `default_view`."""
    probabilities = ([model_dropout(encoder)] if fields.default_view else []) + list(fields.views)
    views = torch.stack(dropout_passes(encoder, probabilities, embed), dim=1)
    return supcon(views, labels, fields.temperature, fields.normalize, fields.base_temperature)
