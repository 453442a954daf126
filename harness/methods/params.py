"""Method-level parameter groups shared by several methods (the heads, the projection); a method's `Params`
inherits the groups it uses. Stage fields (temperature, data, negatives, schedules) are declared once, on
the stage specs (harness/stages/); presets name them by alias (harness.methods.preset)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from harness.choices import ParaphraseHead, Projection, SimilarityHead
from harness.fields import Strict, refuse_set


class SentimentHeadParams(Strict):
    """The sentiment head and the encoder's dropout (every CS224N method)."""

    sentiment_head: Literal["linear", "mlp"] = "linear"
    head_dropout: float = Field(0.1, ge=0, lt=1)
    encoder_dropout: float | None = Field(None, ge=0, lt=1, description="None keeps the model's own")


class HeadParams(SentimentHeadParams):
    """Prediction heads for all three tasks (Chen Table 3, David et al. 5.4, Phillips 3.2)."""

    paraphrase_head: ParaphraseHead = "linear"
    similarity_head: SimilarityHead = "cosine"
    pair_layers: Literal[0, 2] = Field(0, description="0: heads on the embeddings; 2: a 2-layer MLP first")
    head_sharing: Literal["separate", "first_layer", "shared"] = "separate"
    quora_train: str | None = Field(None, description="path to quora-train.csv; default: split quora-dev")
    score_tasks: Literal["trained", "all"] = Field(
        "trained",
        description="the dev tasks scored: those trained, or all three (Chen Table 1: SST supervision, "
        "scored on all three with parameter-free pair heads)",
    )


class ProjectionParams(Strict):
    """The projection over the embedding in contrastive training (harness.encoders.projection_head)."""

    mlp_projection: bool = Field(True, description="a projection over the embedding in contrastive training")
    projection: Projection = Field(
        "simcse", description="simcse: Linear + Tanh (Gao et al.); simclr: Linear, ReLU, Linear (Chen 4.1)"
    )
    mlp_at_test: bool = Field(
        False, description="evaluate the projected embedding (supervised SimCSE); default: training only"
    )

    @model_validator(mode="after")
    def _projection_fields_need_one(self) -> ProjectionParams:
        if not self.mlp_projection:
            refuse_set(self, {"projection", "mlp_at_test"}, "with mlp_projection: false")
        return self
