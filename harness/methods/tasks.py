"""The CS224N multi-task base: methods trained on SST-5, Quora and STS with a sentiment head and
paraphrase / similarity heads (harness.networks.tasks), scored on the CS224N dev sets. The
fine-tuning stages that train the heads are harness/stages/finetune.py and fusion.py."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.data.cs224n import MultitaskData
from harness.methods.base import DataSources, Method
from harness.methods.params import HeadParams, SentimentHeadParams
from harness.train.combiners import TASKS


class TaskMethod(Method):
    """Encoder + sentiment head + paraphrase / similarity heads, trained on the CS224N tasks."""

    Params: ClassVar[type[SentimentHeadParams]] = HeadParams
    scorer = "multitask"
    model = "tasks"

    @classmethod
    def trained_tasks(cls, params: Any, stages: tuple[Any, ...]) -> tuple[str, ...]:
        """All three tasks."""
        return TASKS

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> MultitaskData:
        return cls.sources(run, sources.data_dir).tasks()
