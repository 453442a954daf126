"""`finetune` stages: the CS224N tasks (SST-5, Quora, STS) on the method's heads. `finetune: multitask`
trains all three with a combiner (harness.train.combiners: average, batch / epoch round robin, PCGrad);
`finetune: sst` (or quora, sts) trains that task alone. `heads_only` freezes the encoder (Phillips'
"pretrain" baseline). A pipeline with such a stage is scored on the CS224N dev sets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from harness.data.cs224n import MultitaskData
from harness.fields import refuse_set
from harness.stages.registry import StageContext, StageSources, StageSpec, register_stage
from harness.train.combiners import COMBINERS, TASKS, Combiner, schedule

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.train.loop import Stage

Tasks = Literal["multitask", "sst", "quora", "sts"]


class TaskStage(StageSpec):
    """Fields of a stage that trains the task heads; the kind's own key names the tasks."""

    needs_heads = True
    scorer = "multitask"

    combiner: Combiner = Field(
        "average",
        description="how the three tasks share the steps (harness.train.combiners); multitask stages only",
    )
    heads_only: bool = Field(False, description="freeze the encoder, train only the heads")
    pcgrad_reduction: Literal["mean", "sum"] = Field(
        "mean",
        description="combiner pcgrad: the projected task gradients' mean over the tasks on the shared "
        "encoder (Pytorch-PCGrad, the code Chen uses) or their sum (Yu et al. Algorithm 1); "
        "harness.train.pcgrad",
    )

    @model_validator(mode="after")
    def _combiner_of_the_tasks(self) -> TaskStage:
        if self.variety != "multitask":
            refuse_set(self, self.unread(), f"by a single-task stage ({self.kind}: {self.variety})")
        elif self.combiner != "pcgrad":
            refuse_set(self, self.unread(), f"with combiner {self.combiner!r} (pcgrad reads it)")
        if self.variety == "multitask" and COMBINERS[self.combiner].single:
            raise ValueError(f"combiner 'single' is written {self.kind}: sst (or quora, sts)")
        return self

    def unread(self) -> set[str]:
        if self.variety != "multitask":
            return {"combiner", "pcgrad_reduction"}
        return {"pcgrad_reduction"} if self.combiner != "pcgrad" else set()

    def reads_quora(self) -> bool:
        return "quora" in self.tasks

    @property
    def tasks(self) -> tuple[str, ...]:
        return TASKS if self.variety == "multitask" else (self.variety,)

    def load(self, sources: StageSources) -> MultitaskData:
        return sources.tasks()

    def build(self, ctx: StageContext, settings: RunConfig, data: MultitaskData) -> Stage:
        """Fine-tuning on the tasks: one step's loss is the mean of its task losses (or PCGrad)."""
        from harness.train.loop import Stage

        epochs, lr, batch_size, max_steps = self.schedule(settings)
        sizes = {"sst": len(data.sst_train), "quora": len(data.quora_train), "sts": len(data.sts_train)}
        combiner, single = ("single", self.variety) if self.variety != "multitask" else (self.combiner, "sst")
        return Stage(
            "tasks",
            lambda rng: schedule(sizes, batch_size, combiner, rng, single),
            [lambda step: ctx.heads().step_loss(step, data)],
            epochs,
            lr,
            max_steps,
            trainable=(lambda: ctx.heads().head_parameters()) if self.heads_only else None,
            combine=COMBINERS[combiner].backward,
            pcgrad_reduction=self.pcgrad_reduction,
        )


@register_stage("finetune")
class FinetuneStage(TaskStage):
    finetune: Tasks
