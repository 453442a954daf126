"""`repeat` groups: `{repeat: 5, stages: [{contrastive: sup_quora}, {contrastive: unsup, data: [sst]}]}`
trains the listed stages in order, 5 times over: an epoch of each in turn when each has one epoch (Chen
4.1: "In each epoch, this is followed by unsupervised training on the other 2 datasets sequentially").
Each repetition of a stage is a stage of its own (fresh optimizer, its own warm-up and decay) whose
batches are shuffled as the next epochs of that stage, not as its first ones again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from harness.fields import refuse_set
from harness.stages.registry import StageContext, StageEntry, StageSources, StageSpec, register_stage

if TYPE_CHECKING:
    from harness.config import RunConfig


@register_stage("repeat")
class RepeatStages(StageSpec):
    repeat: int = Field(gt=0, description="how many times the group runs")
    stages: list[StageEntry] = Field(min_length=1, description="the group, in order")

    @model_validator(mode="after")
    def _schedule_belongs_to_the_stages(self) -> RepeatStages:
        refuse_set(
            self, {"epochs", "lr", "batch_size", "max_steps"}, "by a repeat group (set it on its stages)"
        )
        return self

    def expand(self) -> list[StageSpec]:
        """The group's stages `repeat` times; each pass is a copy that knows its number, so its shuffling
        goes on from the previous pass's epochs instead of repeating their batch order."""
        inner = [stage for entry in self.stages for stage in entry.expand()]
        passes = []
        for number in range(self.repeat):
            for stage in inner:
                copy = stage.model_copy()
                copy._repetition = stage._repetition * self.repeat + number
                passes.append(copy)
        return passes

    def load(self, sources: StageSources) -> Any:
        raise TypeError("a repeat group is expanded into its stages before loading")

    def build(self, ctx: StageContext, settings: RunConfig, data: Any) -> Any:
        raise TypeError("a repeat group is expanded into its stages before building")
