"""Contrastive and task training composed (Chen 3.3): the shared base of `contrastive_first`,
`supervised_first` and `fusion`. The contrastive stage has its own `contrastive_*` schedule; the task
stage uses the run's epochs / lr / batch_size / max_steps."""

from __future__ import annotations

from typing import Any

from harness.data.cs224n import MultitaskData
from harness.methods.base import DataSources
from harness.methods.contrastive import ContrastiveMixin, contrastive_examples
from harness.methods.params import ContrastiveStageParams, MultitaskParams
from harness.methods.tasks import TaskMethod, multitask_data
from harness.model.encoder import Encoder
from harness.train.loop import Stage


class ComposedParams(MultitaskParams, ContrastiveStageParams):
    """Heads, the task schedule and a contrastive stage with its own schedule."""


class ComposedMethod(ContrastiveMixin, TaskMethod):
    Params = ComposedParams

    def __init__(self, encoder: Encoder, params: ComposedParams) -> None:
        TaskMethod.__init__(self, encoder, params)
        self.init_contrastive(params)

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> tuple[MultitaskData, list[Any]]:
        tasks, params = multitask_data(run, sources.data_dir), run.params
        return tasks, contrastive_examples(params.contrastive, params, run.settings, sources.data_dir, tasks)

    def task_data(self, data: tuple[MultitaskData, list[Any]]) -> MultitaskData:
        return data[0]

    def contrastive(self, examples: list[Any]) -> Stage:
        p = self.params
        return self.contrastive_stage(p.contrastive, examples, p.contrastive_epochs, p.contrastive_lr,
                                      p.contrastive_batch_size, p.contrastive_max_steps)  # fmt: skip
