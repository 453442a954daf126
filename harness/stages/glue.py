"""`glue` stages: standard fine-tuning on a GLUE task (Devlin et al. 2019, 4.1): the pooled embedding of
the sentence, or of the pair encoded jointly ([CLS] a [SEP] b [SEP]), then dropout and one linear layer;
cross-entropy over the classes, or MSE on the score for the regression task STS-B ("no architecture
modifications", SupCL-Seq footnote 3). With `pooling: cls` the embedding is BERT's pooler output, as in
Devlin et al. `heads_only` freezes the encoder: SupCL-Seq's linear probe. The head is named per task,
so a later stage on the same task (a probe after fine-tuning) trains the same head."""

from __future__ import annotations

import random
from typing import Any, Literal

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import nn

from harness.data.glue import GLUE_TASKS, GlueSplit, glue_task, read_glue
from harness.stages.registry import StageSpec, register_stage
from harness.train.batching import random_batches
from harness.train.loop import Stage


def head_name(task: str) -> str:
    return "glue_" + task.replace("-", "").lower()


def glue_outputs(method: Any, task: str, split: GlueSplit, rows: list[int]) -> torch.Tensor:
    """The task head's outputs [len(rows), classes] (one column for regression)."""
    first = [split.first[i] for i in rows]
    if split.second is None:
        embedded = method.encoder.embed(first)
    else:
        embedded = method.encoder.embed_pairs(first, [split.second[i] for i in rows])
    return getattr(method, head_name(task))(embedded)


def glue_loss(outputs: torch.Tensor, targets: torch.Tensor, regression: bool) -> torch.Tensor:
    if regression:
        return F.mse_loss(outputs[:, 0].float(), targets.float())
    return F.cross_entropy(outputs.float(), targets)


@register_stage("glue")
class GlueStage(StageSpec):
    objective = "glue"

    glue: Literal[tuple(GLUE_TASKS)]  # type: ignore[valid-type]
    head_dropout: float = Field(0.1, ge=0, lt=1, description="before the linear head (BERT's 0.1)")
    heads_only: bool = Field(False, description="freeze the encoder, train only the head (linear probe)")

    def modules(self, hidden: int) -> dict[str, nn.Module]:
        outputs = glue_task(self.glue).num_outputs
        return {
            head_name(self.glue): nn.Sequential(nn.Dropout(self.head_dropout), nn.Linear(hidden, outputs))
        }

    def load(self, run: Any, sources: Any) -> GlueSplit:
        return read_glue(sources.data_dir, self.glue, "train")

    def build(self, method: Any, settings: Any, data: GlueSplit) -> Stage:
        epochs, lr, batch_size, max_steps = self.schedule(settings)
        regression = glue_task(self.glue).labels is None
        head = getattr(method, head_name(self.glue))

        def loss(rows: list[int]) -> dict[str, torch.Tensor]:
            targets = torch.as_tensor(data.targets[rows], device=method.encoder.device)
            return {"loss": glue_loss(glue_outputs(method, self.glue, data, rows), targets, regression)}

        def batches(rng: random.Random) -> list[list[int]]:
            return random_batches(list(range(len(data))), batch_size, rng)

        return Stage(f"glue-{self.glue}", batches, [loss], epochs, lr, max_steps,
                     trainable=(lambda: list(head.parameters())) if self.heads_only else None)  # fmt: skip
