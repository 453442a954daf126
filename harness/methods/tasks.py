"""The CS224N multi-task base: the encoder with a sentiment head and paraphrase / similarity heads, and
the task losses. The fine-tuning stages that use them are harness/stages/finetune.py and fusion.py."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from harness.data.cs224n import MultitaskData, run_multitask_data
from harness.losses import binary_cross_entropy, cross_entropy, mse
from harness.methods.base import DataSources, Method
from harness.methods.params import HeadParams, MultitaskParams, SentimentHeadParams
from harness.model.encoder import Encoder
from harness.model.heads import PairHeads, SentimentHead
from harness.train.multitask import TASKS


class TaskMethod(Method):
    """Encoder + sentiment head + paraphrase / similarity heads, trained on the CS224N tasks."""

    Params: ClassVar[type[SentimentHeadParams]] = MultitaskParams
    objective = "multitask"

    def __init__(self, encoder: Encoder, params: SentimentHeadParams) -> None:
        super().__init__(encoder, params)
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

    @classmethod
    def trained_tasks(cls, params: Any) -> tuple[str, ...]:
        """The tasks this configuration trains."""
        return (params.single_task,) if params.combiner == "single" else TASKS

    @classmethod
    def scored_tasks(cls, params: Any) -> tuple[str, ...]:
        """The tasks scored on dev: the trained ones, or all three with `score_tasks: all`."""
        return TASKS if getattr(params, "score_tasks", "trained") == "all" else cls.trained_tasks(params)

    @property
    def tasks(self) -> tuple[str, ...]:
        return self.scored_tasks(self.params)

    def task_data(self, data: Any) -> MultitaskData:
        """The CS224N sets inside what `load_train_data` returned (scored on their dev splits)."""
        return data

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> MultitaskData:
        return run_multitask_data(run, sources.data_dir)

    def task_loss(self, task: str, rows: list[int], data: MultitaskData) -> torch.Tensor:
        """CE on SST-5, BCE on Quora's paraphrase logit, MSE on the 0-5 STS score."""
        device = self.encoder.device
        if task == "sst":
            logits = self.sentiment(self.encoder.embed([data.sst_train.texts[i] for i in rows]))
            return cross_entropy(logits, torch.as_tensor(data.sst_train.labels[rows], device=device))
        pairs = data.quora_train if task == "quora" else data.sts_train
        emb = self.encoder.embed([pairs.first[i] for i in rows] + [pairs.second[i] for i in rows])
        u, v = emb[: len(rows)], emb[len(rows) :]
        target = torch.as_tensor(np.asarray(pairs.targets[rows], dtype=np.float32), device=device)
        if task == "quora":
            return binary_cross_entropy(self.pairs.paraphrase_logit(u, v), target)
        return mse(self.pairs.similarity_score(u, v), target)

    def step_loss(self, step: dict[str, list[int]], data: MultitaskData) -> dict[str, torch.Tensor]:
        """The mean of the step's task losses; each is logged, and kept apart for PCGrad."""
        losses = {task: self.task_loss(task, rows, data) for task, rows in step.items()}
        stacked = torch.stack(list(losses.values()))
        return {"loss": stacked.mean(), "task_losses": stacked, **{f"loss_{t}": v for t, v in losses.items()}}
