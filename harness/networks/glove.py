"""The model of `glove` (harness.methods.glove): no transformer and nothing to train; the evaluation
encodes with the averaged GloVe vectors (harness.encoders.glove)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.encoders.glove import GloveEmbedder
from harness.methods.glove import GloveParams, vectors_file
from harness.networks.base import MethodModel
from harness.registry import register_model

if TYPE_CHECKING:
    from harness.methods.base import Method
    from harness.train.loop import Stage


@register_model("glove")
class GloveModel(MethodModel):
    """The GloVe embedder (the vectors file is read here: a missing one skips the trial)."""

    def __init__(self, encoder: None, params: GloveParams, method: type[Method], specs: tuple = ()) -> None:
        super().__init__(None, params, method, specs)
        self.embedder = GloveEmbedder(vectors_file(params.glove_path))

    def eval_encoder(self) -> GloveEmbedder:
        return self.embedder

    def stages(self, config: Any, data: Any) -> list[Stage]:
        return []
