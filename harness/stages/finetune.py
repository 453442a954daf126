"""`finetune` stages: the CS224N tasks (SST-5, Quora, STS) on the method's heads. `finetune: multitask`
trains all three with a combiner (harness.train.multitask: average, batch / epoch round robin, PCGrad);
`finetune: sst` (or quora, sts) trains that task alone. `heads_only` freezes the encoder (Phillips'
"pretrain" baseline). A pipeline with such a stage is scored on the CS224N dev sets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, model_validator

from harness.data.cs224n import MultitaskData, run_multitask_data
from harness.fields import refuse_set
from harness.stages.registry import StageSpec, register_stage
from harness.train.multitask import COMBINERS, TASKS, Combiner, schedule

if TYPE_CHECKING:
    from harness.train.loop import Stage

Tasks = Literal["multitask", "sst", "quora", "sts"]


class TaskStage(StageSpec):
    """Fields of a stage that trains the task heads; the kind's own key names the tasks."""

    needs_heads = True
    objective = "multitask"

    combiner: Combiner = Field("average", description="finetune: multitask only")
    heads_only: bool = Field(False, description="freeze the encoder, train only the heads")

    @model_validator(mode="after")
    def _combiner_of_the_tasks(self) -> TaskStage:
        if self.variety != "multitask":
            refuse_set(self, self.unread(), f"by a single-task stage ({self.kind}: {self.variety})")
        elif COMBINERS[self.combiner].single:
            raise ValueError(f"combiner 'single' is written {self.kind}: sst (or quora, sts)")
        return self

    def unread(self) -> set[str]:
        return {"combiner"} if self.variety != "multitask" else set()

    @classmethod
    def from_params(cls, params: Any, **fields: Any) -> TaskStage:
        """The stage a preset's `combiner` / `single_task` fields describe."""
        if params.combiner == "single":
            return cls(**{cls.kind: params.single_task}, **fields)
        return cls(**{cls.kind: "multitask"}, combiner=params.combiner, **fields)

    def reads_quora(self) -> bool:
        return "quora" in self.tasks

    @property
    def tasks(self) -> tuple[str, ...]:
        return TASKS if self.variety == "multitask" else (self.variety,)

    def load(self, run: Any, sources: Any) -> MultitaskData:
        return run_multitask_data(run, sources.data_dir)

    def build(self, method: Any, settings: Any, data: MultitaskData) -> Stage:
        """Fine-tuning on the tasks: one step's loss is the mean of its task losses (or PCGrad)."""
        from harness.train.loop import Stage

        epochs, lr, batch_size, max_steps = self.schedule(settings)
        sizes = {"sst": len(data.sst_train), "quora": len(data.quora_train), "sts": len(data.sts_train)}
        combiner, single = ("single", self.variety) if self.variety != "multitask" else (self.combiner, "sst")
        heads = lambda: [p for head in (method.sentiment, method.pairs) if head for p in head.parameters()]  # noqa: E731
        return Stage(
            "tasks",
            lambda rng: schedule(sizes, batch_size, combiner, rng, single),
            [lambda step: method.step_loss(step, data)],
            epochs,
            lr,
            max_steps,
            trainable=heads if self.heads_only else None,
            combine=COMBINERS[combiner].backward,
        )


@register_stage("finetune")
class FinetuneStage(TaskStage):
    finetune: Tasks
