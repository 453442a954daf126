"""The model of every pipeline method (harness.methods.pipeline): the encoder, the CS224N heads when a
stage trains them, the projection when one is contrastive, and the modules a stage brings (a GLUE task's
head); each stage built over it in order."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from harness.data.cs224n import MultitaskData
from harness.encoders.projection_head import ProjectedEncoder, projection_head
from harness.methods.params import ProjectionParams
from harness.methods.pipeline import GLUE_FIELDS, HEAD_ONLY, PipelineData, PipelineParams
from harness.networks.base import MethodModel
from harness.networks.tasks import TaskModel
from harness.registry import register_model
from harness.stages.registry import StageContext, StageSpec

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.encoders.encoder import Encoder
    from harness.evaluate.encode import Embedder
    from harness.methods.base import Method
    from harness.train.loop import Stage


@contextlib.contextmanager
def own_seed(name: str) -> Iterator[None]:
    """Build a module from the run's seed and its name, leaving the global torch RNG as it was."""
    with torch.random.fork_rng(devices=[]):
        offset = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")
        torch.manual_seed((torch.initial_seed() + offset) % 2**63)
        yield


@register_model("pipeline")
class PipelineModel(TaskModel):
    """The modules of a pipeline method's stages, and the stages built over them."""

    params: PipelineParams

    def __init__(
        self, encoder: Encoder, params: PipelineParams, method: type[Method], specs: tuple[StageSpec, ...]
    ) -> None:
        """Each module is initialised from its own seed (the run's seed and the module's name), so that
        no module's initial weights depend on which other modules the pipeline has (the stage cache
        relies on it: a pre-training stage is the same whatever heads fine-tuning adds later)."""
        MethodModel.__init__(self, encoder, params, method, specs)
        self.sentiment = self.pairs = self.projection = None
        if any(s.needs_heads for s in self.specs):
            with own_seed("heads"):
                self.init_heads(params)
        if any(s.needs_projection for s in self.specs) and params.mlp_projection:
            with own_seed("projection"):
                self.projection = projection_head(encoder.hidden_size, params.projection)
        self.stage_modules: list[str] = []
        for spec in self.specs:
            with own_seed(f"modules of {spec.kind}: {spec.variety}"):
                built = spec.modules(encoder.hidden_size)
            for name, module in built.items():
                if name not in self._modules:
                    self.add_module(name, module)
                    self.stage_modules.append(name)

    def stage_descriptions(self, config: RunConfig) -> tuple[dict[str, Any], list[dict[str, Any]]]:
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
        stage that trains for the scorer on (before it the task heads are still random)."""
        trained = not any(spec.scorer for spec in self.specs)
        scored = []
        for spec in self.specs:
            trained = trained or spec.scorer is not None
            scored.append(trained)
        return scored

    def eval_encoder(self) -> Embedder:
        """The embedding evaluation scores: the projection on top with `mlp_at_test` (supervised SimCSE,
        princeton-nlp/SimCSE@49fa580 simcse/models.py:262), else the encoder alone."""
        if self.params.mlp_at_test and self.projection is not None:
            return ProjectedEncoder(self.encoder, self.projection)
        return self.encoder

    def task_data(self, data: PipelineData) -> MultitaskData | None:
        return data.tasks

    def context(self) -> StageContext:
        """What the stages train: this model's encoder, projection, heads and stage modules."""
        heads = self if self.sentiment is not None else None
        modules = {name: module for name, module in self.named_children() if name in self.stage_modules}
        return StageContext(self.encoder, self.projection, heads, modules)

    def stages(self, config: RunConfig, data: PipelineData) -> list[Stage]:
        """The loop's stages; with a task scorer, the stages before the first one that trains for it
        (pre-training, the task heads still random) are not dev-scored."""
        ctx = self.context()
        stages = [spec.build(ctx, config, d) for spec, d in zip(self.specs, data.stages, strict=True)]
        for spec, stage, scored in zip(self.specs, stages, self.stages_scored(), strict=True):
            stage.scored = scored
            stage.first_epoch = spec.first_epoch(config)
        return stages
