"""`scl`: SBERT NLI training with cross-entropy mixed with a supervised contrastive loss.

Liao, "Sentence Embeddings using Supervised Contrastive Learning", eq. 3:
    L = (1 - lambda) * L_CE + lambda * L_SCL
L_CE: softmax classifier over (u, v, |u - v|) for every (premise, hypothesis) pair (eq. 1).
L_SCL: `harness.losses.nli_supervised_contrastive` with temperature tau and Liao's N+/N- selection:
one anchor per entailment row and N+/N- drawn at random, as the authors' code (Danqi7/584-final@994712c
bert_sent_embed.py:114-168) where the paper (3) is silent; `anchors: premise` / `draw: first` are the
other variants.

`contrastive_term: augment`: Liao's "Augment" baselines (Table 2 caption: "trained on augmented anchor,
positive and negative sentences using pure cross-entropy loss"; 3p3n-Augment, allpalln-Augment), as
    L = (1 - lambda) * L_CE + lambda * L_aug
L_aug: `harness.losses.nli_augmented_cross_entropy`, the same classifier's cross-entropy over every
(anchor premise, selected hypothesis) pair that L_SCL would compare (same anchors, N+/N- selection and
draw; 4.4: "3p3n-lambda0.5-SCL and 3p3n-Augment have the same amount of augmented positive and negative
sentences"): pairs the data labels keep their label, another premise's hypothesis is labelled
contradiction. An interpretation: the paper gives no labels and the authors' code has none of it
(Danqi7/584-final@994712c README.md:5 lists only "AUG#1: lambda: 0.5, temperature N/A, pos:3, neg:3");
contradiction because those are what L_SCL pushes apart. `tau` and `normalize` are L_SCL's and are
refused with it.

Run defaults (`run_defaults`, also `sbert`'s) are Liao's: the 8-layer uncased BERT with hidden size 512
(4.2; Danqi7/584-final@0e40add models.py:21 `google/bert_uncased_L-8_H-512_A-8`), mean pooling over the
output tokens except [CLS] (3; models.py:44, :65: `mean_no_cls`), Adam lr 2e-5 with a linear schedule and
10% warm-up, batch 64, 1 epoch (4.2; the authors' code keeps the lr constant after the warm-up,
bert_sent_embed.py:275-276 `get_constant_schedule_with_warmup`: `lr_schedule: constant`), the final model
evaluated (4.2: one epoch, no model selection), no gradient clipping (`max_grad_norm: 0`; the paper does not
say; the authors' loop steps right after `loss.backward()`, Danqi7/584-final@0e40add
bert_sent_embed.py:143-145), AdamW's epsilon 1e-6 (`adam_eps`; bert_sent_embed.py:274
`AdamW(model.parameters(), lr=learning_rate)` is transformers.AdamW, whose default eps is 1e-6, where
PyTorch's is 1e-8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.choices import Anchors, Draw, NLIBatches, NLIHead
from harness.data.nli import NLIGroup
from harness.fields import parse_selection, refuse_set
from harness.methods.base import DataSources, Method
from harness.registry import register_method


class SCLParams(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    lam: float = Field(
        0.5, alias="lambda", ge=0.0, le=1.0, description="weight of L_SCL (or of L_aug with augment)"
    )
    contrastive_term: Literal["scl", "augment"] = Field(
        "scl",
        description="the lambda-weighted term: L_SCL, or augment (Liao's Augment baselines: the "
        "classifier's cross-entropy over the anchor / selected positive and negative pairs)",
    )
    temperature: float = Field(
        1.0,
        alias="tau",
        gt=0.0,
        description="softmax temperature of L_SCL (Liao's tau, the name its YAML "
        "field, MLflow param and report column keep: `tau`, an alias of `temperature`)",
    )
    selection: str = Field("allpalln", description="N+/N- per anchor: 3p3n, 3palln, allpalln, ...")
    classifier: NLIHead = Field("two_linear", description="Liao's two linear layers; linear (SBERT); mlp")
    normalize: bool = Field(
        False,
        description="L2-normalise inside L_SCL (cosine); Liao eq. 2 uses the raw dot product",
    )
    anchors: Anchors = Field(
        "entailment_row",
        description="one anchor per entailment row (the authors' code) or per distinct premise",
    )
    draw: Draw = Field(
        "random", description="which N+/N- when capped: random (the authors' code) or first in batch order"
    )
    nli_batches: NLIBatches = Field(
        "file_order",
        description="file_order: SNLI's pairs in order, batch_size rows a batch, never shuffled (the "
        "authors' loader); premise_groups: whole premise groups shuffled each epoch and packed "
        "(harness.data.nli)",
    )

    @field_validator("selection")
    @classmethod
    def _valid_selection(cls, value: str) -> str:
        parse_selection(value)
        return value

    @model_validator(mode="after")
    def _draw_needs_a_cap(self) -> SCLParams:
        if parse_selection(self.selection) == (None, None):
            refuse_set(self, {"draw"}, f"with selection {self.selection} (no cap, nothing to draw)")
        return self

    @model_validator(mode="after")
    def _augment_has_no_similarity(self) -> SCLParams:
        if self.contrastive_term == "augment":
            refuse_set(
                self, {"temperature", "normalize"}, "with contrastive_term: augment (no similarity in it)"
            )
        return self


@register_method("scl")
class SupervisedContrastiveNLI(Method):
    Params: ClassVar[type[BaseModel]] = SCLParams  # as Method's: sbert, a subclass, has its own
    model = "nli"
    reads_nli = True
    run_defaults: ClassVar[dict[str, Any]] = {
        "model": "google/bert_uncased_L-8_H-512_A-8", "pooling": "mean_no_cls", "lr": 2e-5, "batch_size": 64,
        "epochs": 1, "warmup_ratio": 0.1, "lr_schedule": "linear", "keep_best": False, "max_grad_norm": 0.0,
        "adam_eps": 1e-6,  # transformers.AdamW's default (bert_sent_embed.py:274 passes only lr)
    }  # fmt: skip
    run_defaults_source = (
        "Liao 3, 4.2; Danqi7/584-final@0e40add models.py:21, :44, :65; "
        "bert_sent_embed.py:143-145 (no gradient clipping), :274 (transformers.AdamW: eps 1e-6)"
    )

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> Sequence[NLIGroup]:
        return cls.sources(run, sources.data_dir).nli_groups()
