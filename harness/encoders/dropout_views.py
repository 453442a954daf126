"""SupCL-Seq's dropout views (Sedghamiz et al., 2021, section 2 and Fig. 1): the batch is forwarded N
times through the same encoder, pass n with every dropout probability set to p_n, x~_n = Enc(x, p_n);
with `normalize` each view is L2-normalised (footnote 2), and the supervised contrastive loss (SupCL-Seq
eq. 2, harness.losses.supcon) takes the B x N views, same label = positive.

`view_passes` says which passes a list of probabilities makes:

- `listed` (default): one pass per listed probability, as the paper's text defines them (section 2,
  "N distinct dropout masks (i.e., different dropout probabilities)"; Fig. 1: N = 2, "p = 0 and p = 0.1
  respectively", the anchor at p = 0).
- `authors_loop`: the passes the authors' public training loop makes (hooman650/SupCL-Seq@320440f
  src/SupCsTrainer.py, a subclass of Hugging Face's Trainer; examples/glue_bert_base.ipynb cell 12:
  `def_drop_out=0.1`). That the published numbers ran this loop is inferred, not stated: Appendix A says
  only that SupCL-Seq "is implemented on top of the Huggingface's trainer python package", and the public
  notebook itself runs 3 epochs at batch 32 per device (cell 10), not Table 4's settings. Per batch: one pass
  at the dropout the model is at now (:66), then for each listed p the dropout is set to p unless p equals
  the default 0.1 (:78-79), when the pass runs at whatever was set last (:84); after the loop it is set
  back to 0.1 only if the last entry differs from 0.1 (:94). The dropout carries over to the next batch.
  So [0.0, 0.1, 0.2] runs [0.1, 0.0, 0.0, 0.2] every batch, and [0.0, 0.1] runs [0.1, 0.0, 0.0] on the
  first batch and [0.0, 0.0, 0.0] on every later one. The harness's default is the model's own dropout
  (BERT's 0.1, the notebook's `def_drop_out`).

The code also scales the loss by tau / 0.07 (:211, :132): `base_temperature`. After each batch's passes
the encoder's dropouts are set back to the model's own (what `authors_loop` carries over is kept aside).

A view's probability reaches every dropout of the encoder, attention's included, as the authors'
`set_dropout_mf` sets it (SupCsTrainer.py:104-125: embeddings, attention probabilities, attention and
feed-forward outputs): `Encoder.set_dropout` also sets the number transformers 4.x's SDPA attention reads
(harness.encoders.encoder.DROPOUT_FLOATS; tests/encoders/test_encoder_dropout.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import Field

from harness.fields import Probabilities, TemperatureField

if TYPE_CHECKING:  # torch is imported where a view is made: stage specs read these fields without it
    import torch

T = TypeVar("T")


class DropoutViewFields(TemperatureField):
    """The fields of a SupCL-Seq stage (the `supcl_seq` method's, the `glue_supcon` stage kind's); the
    temperature is SupCL-Seq's tau (0.05, Appendix A)."""

    views: Probabilities = Field(default_factory=lambda: [0.0, 0.1, 0.2], min_length=2)
    normalize: bool = Field(True, description="L2-normalise the views (footnote 2); false: raw inner product")
    view_passes: Literal["listed", "authors_loop"] = Field(
        "listed",
        description="one pass per listed dropout (the paper's text), or the passes the authors' training "
        "loop makes (one at the current dropout first; an entry equal to the default keeps the last one set)",
    )
    base_temperature: float | None = Field(None, gt=0, description="the authors' code: loss x tau / 0.07")


def model_dropout(encoder: Any) -> float:
    """The probability of the transformer's first dropout layer (BERT's 0.1; 0.1 when it has none)."""
    from torch import nn

    return next((m.p for m in encoder.model.modules() if isinstance(m, nn.Dropout)), 0.1)


def authors_loop_passes(listed: Sequence[float], current: float, default: float) -> tuple[list[float], float]:
    """One batch of the authors' loop: (the dropout of each pass, the dropout left for the next batch)."""
    passes = [current]
    for probability in listed:
        if probability != default:
            current = probability
        passes.append(current)
    if listed[-1] != default:
        current = default
    return passes, current


class ViewPasses:
    """The dropout probability of each forward pass, batch after batch, for one training stage."""

    def __init__(self, fields: DropoutViewFields, default: float) -> None:
        self.fields, self.default, self.current = fields, default, default

    def next_batch(self) -> list[float]:
        if self.fields.view_passes == "listed":
            return list(self.fields.views)
        passes, self.current = authors_loop_passes(self.fields.views, self.current, self.default)
        return passes


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
    encoder: Any,
    fields: DropoutViewFields,
    passes: ViewPasses,
    embed: Callable[[], torch.Tensor],
    labels: torch.Tensor,
) -> torch.Tensor:
    """supcon(stack_n Enc(x, p_n), y): the views [B, N, d] of `embed()`, one per pass of this batch."""
    import torch

    from harness.losses import supcon

    views = torch.stack(dropout_passes(encoder, passes.next_batch(), embed), dim=1)
    return supcon(views, labels, fields.temperature, fields.normalize, fields.base_temperature)
