"""Parameter groups shared by several methods; a method's `Params` inherits the groups it uses."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from harness.choices import ParaphraseHead, Projection, SimilarityHead
from harness.fields import Sources, Strict, refuse_set
from harness.stages.contrastive import IGNORED
from harness.train.multitask import Combiner


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


class TaskScheduleParams(Strict):
    """How the three tasks share the fine-tuning steps (Chen 4.2; harness.train.multitask)."""

    combiner: Combiner = "average"
    single_task: Literal["sst", "quora", "sts"] = "sst"

    @model_validator(mode="after")
    def _single_task_only_when_single(self) -> TaskScheduleParams:
        if self.combiner != "single":
            refuse_set(self, {"single_task"}, f"with combiner '{self.combiner}' (only with combiner: single)")
        return self


class MultitaskParams(HeadParams, TaskScheduleParams):
    """Heads and the task schedule: multi-task fine-tuning."""


class ProjectionParams(Strict):
    """The projection over the embedding in contrastive training (harness.model.projection)."""

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


class SimCSEParams(ProjectionParams):
    """SimCSE's loss (Gao et al., 2021): temperature and the projection (training only by default)."""

    temperature: float = Field(0.05, gt=0)


class ContrastiveDataParams(Strict):
    """The examples of a contrastive stage and how they are batched."""

    contrastive_limit: int | None = Field(None, gt=0, description="use only the first N examples")
    length_grouping: bool = Field(
        False,
        description="batch sentences of similar length together (less padding, but in-batch negatives "
        "of similar length); off = random batches, as SimCSE's Trainer (princeton-nlp/SimCSE@3ebee8f "
        "run_unsup_example.sh sets no group_by_length)",
    )


class UnsupDataParams(Strict):
    """Where unsupervised SimCSE's sentences come from."""

    contrastive_data: Sources = Field(default_factory=lambda: ["wiki"], description="for unsup")


class SupervisedPairParams(Strict):
    """Supervised SimCSE's negatives."""

    quora_negatives: bool = Field(True, description="sup_quora: non-paraphrases pushed apart (Chen)")
    hard_negative_weight: float = Field(0.0, description="sup_nli: SimCSE's log weight on own hard negative")


class ContrastiveStageParams(SimCSEParams, ContrastiveDataParams, UnsupDataParams, SupervisedPairParams):
    """A contrastive stage inside a composed method: its kind and its own schedule (Chen 4.2)."""

    contrastive: Literal["unsup", "sup_quora", "sup_nli"] = "unsup"
    contrastive_epochs: int = Field(1, gt=0)
    contrastive_lr: float = Field(3e-5, gt=0)
    contrastive_batch_size: int = Field(64, gt=1)
    contrastive_max_steps: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> ContrastiveStageParams:
        ignored = {"contrastive_data" if f == "data" else f for f in IGNORED[self.contrastive]}
        refuse_set(self, ignored, f"by a '{self.contrastive}' contrastive stage")
        return self


class ComposedParams(MultitaskParams, ContrastiveStageParams):
    """Heads, the task schedule and a contrastive stage with its own schedule (contrastive_first,
    supervised_first)."""
