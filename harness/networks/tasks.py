"""The CS224N multi-task model: the encoder with a sentiment head and paraphrase / similarity heads, and
the task losses (harness.methods.tasks declares the methods; stages/finetune.py and fusion.py train it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from harness.data.cs224n import MultitaskData
from harness.encoders.heads import PairHeads, SentimentHead
from harness.losses import binary_cross_entropy, cross_entropy, mse
from harness.methods.params import HeadParams, SentimentHeadParams
from harness.networks.base import MethodModel
from harness.registry import register_model

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.methods.base import Method


@register_model("tasks")
class TaskModel(MethodModel):
    """Encoder + sentiment head + paraphrase / similarity heads, trained on the CS224N tasks."""

    encoder: Encoder  # always one here (the base class allows none)
    sentiment: SentimentHead | None  # none in a pipeline whose stages train no heads (PipelineModel)

    def __init__(
        self, encoder: Encoder, params: SentimentHeadParams, method: type[Method], specs: tuple = ()
    ) -> None:
        super().__init__(encoder, params, method, specs)
        self.init_heads(params)

    def init_heads(self, params: SentimentHeadParams) -> None:
        hidden = self.encoder.hidden_size
        self.sentiment = SentimentHead(hidden, params.sentiment_head, params.head_dropout)
        self.pairs = (  # sentiment-only methods (SupCL-Seq) have no pair heads
            PairHeads(hidden, params.paraphrase_head, params.similarity_head, params.pair_layers,
                      params.head_sharing, params.head_dropout)
            if isinstance(params, HeadParams) else None
        )  # fmt: skip
        if params.encoder_dropout is not None:
            self.encoder.set_dropout(params.encoder_dropout)

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks scored on dev (the declaration's `scored_tasks`)."""
        return self.method.scored_tasks(self.params, self.specs)

    def head_parameters(self) -> list[nn.Parameter]:
        """The heads' parameters (what a `heads_only` stage trains)."""
        return [p for head in (self.sentiment, self.pairs) if head for p in head.parameters()]

    def task_data(self, data: Any) -> MultitaskData | None:
        """The CS224N sets inside what `load_train_data` returned (scored on their dev splits); None: a
        pipeline whose stages train no heads."""
        return data

    def task_loss(self, task: str, rows: list[int], data: MultitaskData) -> torch.Tensor:
        """CE on SST-5, BCE on Quora's paraphrase logit, MSE on the 0-5 STS score."""
        device = self.encoder.device
        if task == "sst":
            assert self.sentiment is not None, "sst needs the sentiment head"
            logits = self.sentiment(self.encoder.embed([data.sst_train.texts[i] for i in rows]))
            return cross_entropy(logits, torch.as_tensor(data.sst_train.labels[rows], device=device))
        pairs = data.quora_train if task == "quora" else data.sts_train
        emb = self.encoder.embed([pairs.first[i] for i in rows] + [pairs.second[i] for i in rows])
        u, v = emb[: len(rows)], emb[len(rows) :]
        target = torch.as_tensor(np.asarray(pairs.targets[rows], dtype=np.float32), device=device)
        heads = self.pairs
        assert heads is not None, f"{task} needs the pair heads (a sentiment-only model trains SST alone)"
        if task == "quora":
            return binary_cross_entropy(heads.paraphrase_logit(u, v), target)
        return mse(heads.similarity_score(u, v), target)

    def step_loss(self, step: dict[str, list[int]], data: MultitaskData) -> dict[str, torch.Tensor]:
        """The mean of the step's task losses; each is logged, and kept apart for PCGrad."""
        losses = {task: self.task_loss(task, rows, data) for task, rows in step.items()}
        stacked = torch.stack(list(losses.values()))
        return {"loss": stacked.mean(), "task_losses": stacked, **{f"loss_{t}": v for t, v in losses.items()}}
