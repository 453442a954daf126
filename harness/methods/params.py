"""Parameter groups shared by several methods; a method's `Params` inherits the groups it uses."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from harness.train.multitask import Combiner


def split_commas(value: Any) -> Any:
    """Optuna's grid and categorical values must be scalars, so a list may come as "a,b,c"."""
    return [v.strip() for v in value.split(",")] if isinstance(value, str) else value


Source = Literal["wiki", "sst", "quora", "sts"]
Sources = Annotated[list[Source], BeforeValidator(split_commas)]
Probabilities = Annotated[list[Annotated[float, Field(ge=0, lt=1)]], BeforeValidator(split_commas)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HeadParams(Strict):
    """Prediction heads (Chen Table 3, David et al. 5.4, Phillips 3.2) and the multi-task schedule."""

    sentiment_head: Literal["linear", "mlp"] = "linear"
    paraphrase_head: Literal["linear", "bilinear", "cosine"] = "linear"
    similarity_head: Literal["cosine", "relu_cosine"] = "cosine"
    pair_layers: Literal[0, 2] = Field(0, description="0: heads on the embeddings; 2: a 2-layer MLP first")
    head_sharing: Literal["separate", "first_layer", "shared"] = "separate"
    head_dropout: float = Field(0.1, ge=0, lt=1)
    combiner: Combiner = "average"
    single_task: Literal["sst", "quora", "sts"] = "sst"
    encoder_dropout: float | None = Field(None, ge=0, lt=1, description="None keeps the model's own")
    quora_train: str | None = Field(None, description="path to quora-train.csv; default: split quora-dev")


class ContrastiveParams(Strict):
    """A contrastive stage (SimCSE, Gao et al. 2021; Chen 3.2): its data, loss and own schedule."""

    contrastive: Literal["unsup", "sup_quora", "sup_nli"] = "unsup"
    contrastive_data: Sources = Field(default_factory=lambda: ["wiki"], description="for unsup")
    quora_negatives: bool = Field(True, description="sup_quora: non-paraphrases pushed apart (Chen)")
    temperature: float = Field(0.05, gt=0)
    hard_negative_weight: float = Field(0.0, description="sup_nli: SimCSE's log weight on own hard negative")
    mlp_projection: bool = Field(True, description="SimCSE's MLP over the embedding, training only")
    contrastive_epochs: int = Field(1, gt=0)
    contrastive_lr: float = Field(3e-5, gt=0)
    contrastive_batch_size: int = Field(64, gt=1)
    contrastive_max_steps: int | None = Field(None, gt=0)
    contrastive_limit: int | None = Field(None, gt=0, description="use only the first N examples")
    length_grouping: bool = Field(
        False,
        description="batch sentences of similar length together (less padding, but in-batch negatives "
        "of similar length); off = random batches, as SimCSE's Trainer (princeton-nlp/SimCSE@3ebee8f "
        "run_unsup_example.sh sets no group_by_length)",
    )
