"""`supcl_seq`: SupCL-Seq (Sedghamiz et al., 2021). Stage 1: supervised contrastive loss (Khosla et al.)
over several dropout views of each SST sentence, one view per probability in `views` (e.g. [0.0, 0.1,
0.2]), sentences of the same sentiment as positives, tau 0.05 and the inner product as in the paper.
Stage 2: the encoder is frozen and a linear classifier is trained with cross-entropy. Scored on SST-5 dev."""

from __future__ import annotations

from typing import Any

import torch
from pydantic import Field

from harness.data.cs224n import MultitaskData
from harness.fields import Probabilities
from harness.losses import cross_entropy, supcon
from harness.methods.params import SentimentHeadParams
from harness.methods.tasks import TaskMethod
from harness.model.encoder import Encoder
from harness.registry import register_method
from harness.train.loop import Stage
from harness.train.multitask import schedule


class SupCLSeqParams(SentimentHeadParams):
    views: Probabilities = Field(default_factory=lambda: [0.0, 0.1, 0.2], min_length=2)
    temperature: float = Field(0.05, gt=0)
    normalize: bool = Field(False, description="cosine instead of the paper's inner product")
    classifier_epochs: int = Field(1, gt=0)
    classifier_lr: float = Field(1e-3, gt=0)


@register_method("supcl_seq")
class SupCLSeq(TaskMethod):
    Params = SupCLSeqParams

    def __init__(self, encoder: Encoder, params: SupCLSeqParams) -> None:
        super().__init__(encoder, params)
        self.default_dropout = next(
            (m.p for m in encoder.model.modules() if isinstance(m, torch.nn.Dropout)), 0.1
        )

    @classmethod
    def trained_tasks(cls, params: Any) -> tuple[str, ...]:
        return ("sst",)

    def views_loss(self, rows: list[int], data: MultitaskData) -> dict[str, torch.Tensor]:
        texts = [data.sst_train.texts[i] for i in rows]
        views = []
        for probability in self.params.views:
            self.encoder.set_dropout(probability)
            views.append(self.encoder.embed(texts))
        self.encoder.set_dropout(self.default_dropout)
        labels = torch.as_tensor(data.sst_train.labels[rows], device=views[0].device)
        p = self.params
        return {"loss": supcon(torch.stack(views, dim=1), labels, p.temperature, p.normalize)}

    def classifier_loss(self, rows: list[int], data: MultitaskData) -> dict[str, torch.Tensor]:
        self.encoder.eval()
        with torch.no_grad():
            features = self.encoder.embed([data.sst_train.texts[i] for i in rows])
        self.encoder.train()
        labels = torch.as_tensor(data.sst_train.labels[rows], device=features.device)
        return {"loss": cross_entropy(self.sentiment(features), labels)}

    def stages(self, config: Any, data: MultitaskData) -> list[Stage]:
        def sst(rng: Any) -> list[list[int]]:
            return [
                step["sst"]
                for step in schedule({"sst": len(data.sst_train)}, config.batch_size, "single", rng)
            ]

        p = self.params
        return [
            Stage("supcon-views", sst, [lambda rows: self.views_loss(rows, data)], config.epochs, config.lr,
                  config.max_steps, scored=False),  # the classifier is still random: never the best
            Stage("linear-probe", sst, [lambda rows: self.classifier_loss(rows, data)], p.classifier_epochs,
                  p.classifier_lr, config.max_steps, trainable=lambda: list(self.sentiment.parameters())),
        ]  # fmt: skip
