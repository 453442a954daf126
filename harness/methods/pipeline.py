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
presets: their flat fields translate into such a list (`PipelineMethod.pipeline`).

The method builds the CS224N heads when a stage trains them, the projection (harness.model.projection;
training only unless `mlp_at_test`) when a stage is contrastive, and the modules a stage brings (a GLUE
task's head). It is scored by its stages' objective: the CS224N dev sets after `finetune` / `fusion`,
the GLUE task's dev split after `glue`, STS when every stage is contrastive. Stages that read GLUE read
it from `glue_source` / `glue_dir` (harness.data.glue_source).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import Any, Literal, NamedTuple

import torch
from pydantic import Field, ValidationError, model_validator
from torch import nn

from harness.config import one_line_error
from harness.data.cs224n import MultitaskData, run_multitask_data
from harness.errors import HarnessError
from harness.fields import refuse_set
from harness.methods.base import DataSources, Method
from harness.methods.params import HeadParams, ProjectionParams
from harness.methods.tasks import TaskMethod
from harness.model.encoder import Encoder
from harness.model.projection import ProjectedEncoder, projection_head
from harness.registry import register_method
from harness.stages.registry import StageEntry, StageSpec, expand
from harness.train.loop import Stage
from harness.train.multitask import TASKS


def untrained_heads_problem(params: Any, trained: tuple[str, ...]) -> str | None:
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


@contextlib.contextmanager
def own_seed(name: str) -> Iterator[None]:
    """Build a module from the run's seed and its name, leaving the global torch RNG as it was."""
    with torch.random.fork_rng(devices=[]):
        offset = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
        torch.manual_seed((torch.initial_seed() + offset) % 2**63)
        yield


class PipelineData(NamedTuple):
    tasks: MultitaskData | None  # the CS224N sets when a stage trains the heads (scored on their dev)
    stages: list[Any]  # each stage's training data


class PipelineMethod(TaskMethod):
    """Base of every pipeline method; a preset overrides `pipeline` to build its stages from its fields."""

    @classmethod
    def pipeline(cls, params: Any) -> list[StageSpec]:
        return expand(params.stages)

    @classmethod
    def check(cls, params: Any, where: str) -> None:
        try:
            cls.pipeline(params)
        except ValidationError as exc:
            raise one_line_error(exc, where) from None
        if getattr(params, "score_tasks", "trained") == "all":
            problem = untrained_heads_problem(params, cls.trained_tasks(params))
            if problem:
                raise HarnessError(f"{where}: 'score_tasks: all' {problem}")
        if getattr(params, "mlp_at_test", False) and cls.objective_name(params) != "sts":
            raise HarnessError(
                f"{where}: 'mlp_at_test' applies to runs scored on their embeddings (STS), and this one is "
                f"scored by its '{cls.objective_name(params)}' heads; remove it"
            )

    @classmethod
    def objective_name(cls, params: Any) -> str:
        """The objective of its scored stages (CS224N fine-tuning, GLUE), or STS for contrastive ones."""
        return next((s.objective for s in cls.pipeline(params) if s.objective), "sts")

    @classmethod
    def trained_tasks(cls, params: Any) -> tuple[str, ...]:
        trained = {t for s in cls.pipeline(params) if s.needs_heads for t in s.tasks}
        return tuple(t for t in TASKS if t in trained)

    def __init__(self, encoder: Encoder, params: Any) -> None:
        """Each module is initialised from its own seed (the run's seed and the module's name), so that
        no module's initial weights depend on which other modules the pipeline has (the stage cache
        relies on it: a pre-training stage is the same whatever heads fine-tuning adds later)."""
        Method.__init__(self, encoder, params)
        self.specs = self.pipeline(params)
        self.sentiment = self.pairs = self.projection = None
        if any(s.needs_heads for s in self.specs):
            with own_seed("heads"):
                self.init_heads(params)
        if any(s.needs_projection for s in self.specs) and params.mlp_projection:
            with own_seed("projection"):
                self.projection = projection_head(encoder.hidden_size, params.projection)
        for spec in self.specs:
            with own_seed(f"modules of {spec.kind}: {spec.variety}"):
                built = spec.modules(encoder.hidden_size)
            for name, module in built.items():
                if name not in self._modules:
                    self.add_module(name, module)

    def stage_descriptions(self, config: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Method fields acting on every stage (all but the stage list and the groups below), and per
        stage: its logged fields, resolved schedule, first epoch, whether it is dev-scored, and the fields
        of the modules it trains (heads, projection) and of the GLUE data it reads."""
        fields = self.params.model_dump(mode="json")
        own = {"heads": HEAD_ONLY, "projection": set(ProjectionParams.model_fields), "glue": GLUE_FIELDS}
        common = {k: v for k, v in fields.items() if k != "stages" and not any(k in g for g in own.values())}
        described = []
        for spec, stage in zip(self.specs, self.stages_scored(), strict=True):
            groups = {
                "heads": spec.needs_heads,
                "projection": spec.needs_projection,
                "glue": spec.reads_glue(),
            }
            described.append({
                "kind": spec.kind,
                "fields": spec.model_dump(mode="json"),
                "schedule": list(spec.schedule(config)),
                "first_epoch": spec.first_epoch(config),
                "scored": stage,
                **{name: {k: fields.get(k) for k in sorted(own[name])} for name, on in groups.items() if on},
            })  # fmt: skip
        return common, described

    def stages_scored(self) -> list[bool]:
        """Which stages are dev-scored: all when every stage is contrastive, else those from the first
        stage that trains for the objective on (before it the task heads are still random)."""
        trained = not any(spec.objective for spec in self.specs)
        scored = []
        for spec in self.specs:
            trained = trained or spec.objective is not None
            scored.append(trained)
        return scored

    @classmethod
    def load_train_data(cls, run: Any, sources: DataSources) -> PipelineData:
        specs = cls.pipeline(run.params)
        tasks = run_multitask_data(run, sources.data_dir) if any(s.needs_heads for s in specs) else None
        return PipelineData(tasks, [spec.load(run, sources) for spec in specs])

    def eval_encoder(self) -> nn.Module:
        """The embedding evaluation scores: the projection on top with `mlp_at_test` (supervised SimCSE,
        princeton-nlp/SimCSE@49fa580 simcse/models.py:262), else the encoder alone."""
        if getattr(self.params, "mlp_at_test", False) and self.projection is not None:
            return ProjectedEncoder(self.encoder, self.projection)
        return self.encoder

    def task_data(self, data: PipelineData) -> MultitaskData | None:
        return data.tasks

    def stages(self, config: Any, data: PipelineData) -> list[Stage]:
        """The loop's stages; with a task objective, the stages before the first one that trains for it
        (pre-training, the task heads still random) are not dev-scored."""
        stages = [spec.build(self, config, d) for spec, d in zip(self.specs, data.stages, strict=True)]
        for spec, stage, scored in zip(self.specs, stages, self.stages_scored(), strict=True):
            stage.scored = scored
            stage.first_epoch = spec.first_epoch(config)
        return stages


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
        objectives = sorted({s.objective for s in stages if s.objective})
        if len(objectives) > 1:
            raise ValueError(
                f"stages scored by different objectives ({', '.join(objectives)}) cannot share a pipeline; "
                "split them into variants"
            )
        if len({s.glue for s in stages if s.kind == "glue"}) > 1:
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
