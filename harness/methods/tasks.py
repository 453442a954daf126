"""The CS224N multi-task base: heads, task losses, the task fine-tuning stage. Methods that fine-tune on
SST / Quora / STS inherit `TaskMethod` and add stages around `task_stage`."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from harness.data.cs224n import MultitaskData, read_multitask
from harness.losses import binary_cross_entropy, cross_entropy, mse
from harness.methods.base import DataSources, Method
from harness.methods.params import HeadParams, MultitaskParams, SentimentHeadParams
from harness.model.encoder import Encoder
from harness.model.heads import PairHeads, SentimentHead
from harness.train.loop import Stage
from harness.train.multitask import TASKS, schedule


@functools.lru_cache(maxsize=2)
def _multitask(data_dir: Path, quora_train: str | None) -> MultitaskData:
    return read_multitask(data_dir, Path(quora_train) if quora_train else None)


def multitask_data(run: Any, data_dir: Path) -> MultitaskData:
    """The CS224N sets (cached per process); Quora from `quora_train` when the method has that field."""
    return _multitask(data_dir, getattr(run.params, "quora_train", None))


class TaskMethod(Method):
    """Encoder + sentiment head + paraphrase / similarity heads, trained on the CS224N tasks."""

    Params: ClassVar[type[SentimentHeadParams]] = MultitaskParams
    evaluation = "multitask"

    def __init__(self, encoder: Encoder, params: SentimentHeadParams) -> None:
        super().__init__(encoder, params)
        hidden = encoder.hidden_size
        self.sentiment = SentimentHead(hidden, params.sentiment_head, params.head_dropout)
        self.pairs = (  # sentiment-only methods (SupCL-Seq) have no pair heads
            PairHeads(hidden, params.paraphrase_head, params.similarity_head, params.pair_layers,
                      params.head_sharing, params.head_dropout)
            if isinstance(params, HeadParams) else None
        )  # fmt: skip
        if params.encoder_dropout is not None:
            encoder.set_dropout(params.encoder_dropout)

    @property
    def tasks(self) -> tuple[str, ...]:
        return (self.params.single_task,) if self.params.combiner == "single" else TASKS

    def task_data(self, data: Any) -> MultitaskData:
        """The CS224N sets inside what `load_train_data` returned (scored on their dev splits)."""
        return data

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> MultitaskData:
        return multitask_data(run, sources.data_dir)

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

    def task_batches(self, config: Any, data: MultitaskData, rng: Any) -> list[dict[str, list[int]]]:
        sizes = {"sst": len(data.sst_train), "quora": len(data.quora_train), "sts": len(data.sts_train)}
        return schedule(sizes, config.batch_size, self.params.combiner, rng, self.params.single_task)

    def task_stage(self, config: Any, data: MultitaskData, heads_only: bool = False) -> Stage:
        """Fine-tuning on the tasks with the configured combiner (the run's epochs / lr / max_steps)."""
        heads = lambda: [p for head in (self.sentiment, self.pairs) if head for p in head.parameters()]  # noqa: E731
        return Stage(
            "tasks",
            lambda rng: self.task_batches(config, data, rng),
            [lambda step: self.step_loss(step, data)],
            config.epochs,
            config.lr,
            config.max_steps,
            trainable=heads if heads_only else None,
            combine="pcgrad" if self.params.combiner == "pcgrad" else "sum",
        )
