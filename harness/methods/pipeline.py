"""Methods whose training is a list of stages (harness/stages/). `pipeline` takes the list from the YAML:

    method: pipeline
    stages:
      - {contrastive: sup_nli, epochs: 3}
      - repeat: 5                       # Chen 4.1: each epoch, Quora then SST then STS
        stages: [{contrastive: sup_quora}, {contrastive: unsup, data: [sst]},
                 {contrastive: unsup, data: [sts]}]
      - {finetune: multitask, epochs: 10}

Each stage has its own data, epochs, lr, batch size and step budget (unset: the run's). The built-in
methods contrastive_first, supervised_first, fusion, multitask, frozen, unsup_simcse and sup_simcse are
presets: data-level macros whose flat fields are written into such a list at resolution
(harness.methods.preset).

The model (harness.networks.pipeline) builds the CS224N heads when a stage trains them, the
projection (harness.encoders.projection_head; training only unless `mlp_at_test`) when a stage is contrastive,
and the modules a stage brings (a GLUE task's head). It is scored by its stages' scorer: the CS224N
dev sets after `finetune` / `fusion`, the GLUE task's dev split after `glue`, STS when every stage is
contrastive. Stages that read GLUE read it from `glue_source` / `glue_dir` (harness.data.glue_source).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

from pydantic import BaseModel, Field, model_validator

from harness.data.cs224n import MultitaskData
from harness.errors import HarnessError
from harness.fields import refuse_set
from harness.methods.base import DataSources, Method
from harness.methods.params import HeadParams, ProjectionParams
from harness.registry import register_method
from harness.stages.registry import StageEntry, StageSources, StageSpec, expand
from harness.train.combiners import TASKS

if TYPE_CHECKING:
    from harness.resolve.run_spec import ResolvedRun
    from harness.stages.finetune import TaskStage
    from harness.stages.glue import GlueStage


def untrained_heads_problem(params: PipelineParams, trained: tuple[str, ...]) -> str | None:
    """Why scoring all three tasks would score a head no stage trains (None when every untrained task's
    head has no parameters: Chen Table 1's plain cosine), with the fix."""
    untrained = [t for t in TASKS if t not in trained]
    if not untrained:
        return "does nothing when every task is trained; remove it"
    if "sst" in untrained:
        return "cannot score SST untrained (its head has parameters); train it with a finetune: sst stage"
    if params.pair_layers:
        return "needs parameter-free pair heads for the untrained tasks; set pair_layers: 0"
    if "quora" in untrained and params.paraphrase_head != "plain_cosine":
        return "needs a parameter-free paraphrase head for untrained Quora; set paraphrase_head: plain_cosine"
    if "sts" in untrained and params.similarity_head == "linear":
        return "needs a parameter-free similarity head for untrained STS; set similarity_head: cosine"
    return None


HEAD_ONLY = {
    "sentiment_head",
    "head_dropout",
    "paraphrase_head",
    "similarity_head",
    "pair_layers",
    "head_sharing",
}
GLUE_FIELDS = {"glue_source", "glue_dir"}


class PipelineData(NamedTuple):
    tasks: MultitaskData | None  # the CS224N sets when a stage trains the heads (scored on their dev)
    stages: list[Any]  # each stage's training data


class PipelineMethod(Method):
    """Base of every pipeline method (`pipeline` itself and the presets, harness.methods.preset): its
    parameters are a `PipelineParams`, its stages theirs, and the CS224N heads are trained only where a
    stage trains them (`trained_tasks`). Its model (harness.networks.pipeline) builds the modules its
    stages train."""

    model = "pipeline"

    @classmethod
    def resolve(
        cls, params: BaseModel, where: str
    ) -> tuple[PipelineParams, tuple[StageSpec, ...], BaseModel]:
        p = cast(PipelineParams, params)  # `Pipeline`'s (a preset resolves its own fields)
        return p, tuple(expand(p.stages)), p

    @classmethod
    def sources(cls, run: ResolvedRun, data_dir: Path) -> StageSources:
        """The pipeline's data fields beside the data root and the SNLI setting."""
        p = cast(PipelineParams, run.params)
        base = super().sources(run, data_dir)
        return replace(base, quora_train=p.quora_train, glue_source=p.glue_source, glue_dir=p.glue_dir)

    @classmethod
    def check(cls, params: PipelineParams, stages: tuple[StageSpec, ...], where: str) -> None:
        if params.score_tasks == "all":
            problem = untrained_heads_problem(params, cls.trained_tasks(params, stages))
            if problem:
                raise HarnessError(f"{where}: 'score_tasks: all' {problem}")
        if params.mlp_at_test and cls.scorer_name(params, stages) != "sts":
            raise HarnessError(
                f"{where}: 'mlp_at_test' applies to runs scored on their embeddings (STS), and this one is "
                f"scored by its '{cls.scorer_name(params, stages)}' heads; remove it"
            )

    @classmethod
    def scorer_name(cls, params: PipelineParams, stages: tuple[StageSpec, ...]) -> str:
        """The scorer of its scored stages (CS224N fine-tuning, GLUE), or STS for contrastive ones."""
        return next((s.scorer for s in stages if s.scorer), "sts")

    @classmethod
    def trained_tasks(cls, params: PipelineParams, stages: tuple[StageSpec, ...]) -> tuple[str, ...]:
        # the stages that need the heads are the finetune and fusion stages (TaskStage)
        trained = {t for s in stages if s.needs_heads for t in cast("TaskStage", s).tasks}
        return tuple(t for t in TASKS if t in trained)

    @classmethod
    def load_train_data(cls, run: ResolvedRun, sources: DataSources) -> PipelineData:
        specs, where = run.stages, cls.sources(run, sources.data_dir)
        tasks = where.tasks() if any(s.needs_heads for s in specs) else None
        return PipelineData(tasks, [spec.load(where) for spec in specs])


class PipelineParams(HeadParams, ProjectionParams):
    """The stages, the heads (when a stage trains them) and the projection (when one is contrastive)."""

    stages: list[StageEntry] = Field(min_length=1, description="the training stages, in order")
    glue_source: Literal["local", "hub"] = Field(
        "local", description="GLUE tasks: local <TASK>/*.tsv files, or the hub's nyu-mll/glue (internet)"
    )
    glue_dir: str | None = Field(
        None, description="local GLUE: the folder holding <TASK>/; unset: <data>/glue"
    )

    @model_validator(mode="after")
    def _fields_the_stages_read(self) -> PipelineParams:
        stages = expand(self.stages)
        scorers = sorted({s.scorer for s in stages if s.scorer})
        if len(scorers) > 1:
            raise ValueError(
                f"stages scored by different scorers ({', '.join(scorers)}) cannot share a pipeline; "
                "split them into variants"
            )
        if len({cast("GlueStage", s).glue for s in stages if s.kind == "glue"}) > 1:
            raise ValueError("glue stages on different tasks cannot share a pipeline; one task per variant")
        if not any(s.needs_heads for s in stages):
            heads = set(HeadParams.model_fields) - {"quora_train"}
            refuse_set(self, heads, "without a finetune or fusion stage")
        if not any(s.reads_quora() for s in stages):
            refuse_set(self, {"quora_train"}, "without a stage that trains on Quora")
        # only values other than the defaults are refused: a logged config (every field) reads back
        glue = [f for f, other in (("glue_source", self.glue_source != "local"), ("glue_dir", self.glue_dir))
                if other]  # fmt: skip
        if glue and not any(s.reads_glue() for s in stages):
            raise ValueError(f"'{glue[0]}' is not read without a stage that reads a GLUE task; remove it")
        if self.glue_source == "hub" and self.glue_dir:
            raise ValueError("'glue_dir' is not read with glue_source: hub; remove it")
        if not any(s.needs_projection for s in stages):
            refuse_set(self, set(ProjectionParams.model_fields), "without a contrastive or fusion stage")
        return self


@register_method("pipeline")
class Pipeline(PipelineMethod):
    Params = PipelineParams
