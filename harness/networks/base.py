"""The base of what a method trains: an nn.Module that owns the encoder and the method's heads, lists its
training stages and names what the embedding evaluation encodes with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch import nn

if TYPE_CHECKING:
    from pydantic import BaseModel

    from harness.config import RunConfig
    from harness.encoders.encoder import Encoder
    from harness.evaluate.encode import Embedder
    from harness.methods.base import Method
    from harness.stages.registry import StageSpec
    from harness.train.loop import Stage


class MethodModel(nn.Module):
    """`encoder`, the validated `params`, the `method` declaration it was built from and the run's
    resolved stage specs (`ResolvedRun.stages`; none outside pipelines); subclasses add their heads in
    `__init__` and give `stages`."""

    def __init__(
        self,
        encoder: Encoder | None,
        params: BaseModel,
        method: type[Method],
        specs: tuple[StageSpec, ...] = (),
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.params = params
        self.method = method
        self.specs = specs

    @property
    def name(self) -> str:
        return self.method.name

    def stage_descriptions(self, config: RunConfig) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        """For the stage cache (harness.train.stage_keys): (method fields that act on every stage, one
        description per stage of everything else that determines it), or None: not cacheable."""
        return None

    def eval_encoder(self) -> Embedder | None:
        """What the embedding evaluation encodes with (an `Encoder`, or one with a head on top)."""
        return self.encoder

    def stages(self, config: RunConfig, data: Any) -> list[Stage]:
        """The training phases, in order, from the run's common settings (own fields: `self.params`)."""
        raise NotImplementedError
