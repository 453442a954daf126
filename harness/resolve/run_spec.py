"""One resolution per trial: a flat dict of YAML fields becomes a frozen `ResolvedRun` holding the common
settings, the method class and its validated parameters. Everything downstream takes that object."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from harness.config import RunConfig, field_names, one_line_error
from harness.data.train_sets import NLISource
from harness.errors import HarnessError, did_you_mean
from harness.registry import get_method
from harness.scoring.registry import SCORERS

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder
    from harness.methods.base import Method
    from harness.networks.base import MethodModel
    from harness.resolve.run_plan import RunPlan
    from harness.scoring.registry import Scorer
    from harness.stages.registry import StageSources, StageSpec


# generic defaults whose value alone does not say what a run without the paper default would do
GENERIC_MEANING = {
    ("pooling", "model"): "the model's own sentence-transformers pooling, e.g. MiniLM's mean + normalise"
}


@dataclass(frozen=True)
class ResolvedRun:
    """One trial's configuration, validated once."""

    settings: RunConfig
    method: type[Method]
    params: BaseModel
    variant: str | None = None
    # the method's paper defaults that changed a run field the config left unset: (field, value, default)
    paper_defaults: tuple[tuple[str, Any, Any], ...] = ()
    # the training stages, expanded and validated once here (a pipeline method's; none for the others)
    stages: tuple[StageSpec, ...] = ()
    # the method's fields as the config wrote them and MLflow logs them (a preset's flat fields; unset:
    # `params`)
    fields: BaseModel | None = None
    nli: NLISource = NLISource()  # the SNLI where the method or a stage reads it (a data source)

    def flat(self) -> dict[str, Any]:
        """Every resolved field in one flat dict (what MLflow logs as params), the variant's name first."""
        named = {"variant": self.variant} if self.variant is not None else {}
        own = (self.fields or self.params).model_dump(by_alias=True)
        return {**named, **self.settings.model_dump(), **self.nli.model_dump(), **own}

    def sources(self, data_dir: Path) -> StageSources:
        """Where this run's data readers look (the method's data fields beside the data root)."""
        return self.method.sources(self, data_dir)

    @property
    def scorer(self) -> type[Scorer]:
        """The scorer class that scores this run (named by the method)."""
        return SCORERS.get(self.method.scorer_name(self.params, self.stages))

    @functools.cached_property
    def plan(self) -> RunPlan:
        """What this run will train, score and log, worked out once (harness.resolve.run_plan)."""
        from harness.resolve.run_plan import plan_run

        return plan_run(self)

    def paper_defaults_note(self) -> str:
        """`lr=3e-05 (not 2e-05), ...`: what the method's paper defaults changed, or ''; a generic default
        whose name says little (pooling `model`) says what it is."""
        return ", ".join(
            f"{k}={v} (not {was}{': ' + GENERIC_MEANING[k, was] if (k, was) in GENERIC_MEANING else ''})"
            for k, v, was in self.paper_defaults
        )

    def build(self, encoder: Encoder | None) -> MethodModel:
        """The nn.Module the method trains, around `encoder` (harness/networks/)."""
        return self.method.build(encoder, self.params, self.stages)


def method_defaults(named: Any, common: dict[str, Any], own: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """The method's paper defaults (`Method.run_defaults`) for run fields and its own parameters the
    config leaves unset, where they differ from the generic default: (field, value, generic default)."""
    if not isinstance(named, str):
        return []
    method = get_method(named)
    run_fields, own_fields = RunConfig.model_fields, method.Params.model_fields
    applied = []
    for key, value in method.run_defaults.items():
        if key in run_fields and key not in common:
            generic = run_fields[key].get_default(call_default_factory=True)
        elif key in own_fields and key not in own and own_fields[key].alias not in own:
            generic = own_fields[key].get_default(call_default_factory=True)
        else:
            continue
        if value != generic:
            applied.append((key, value, generic))
    return applied


def resolve_run(flat: dict[str, Any], where: str = "config", variant: str | None = None) -> ResolvedRun:
    """Split a flat dict into the common settings and the method's own fields, validating both; the
    method's paper defaults fill what the config leaves unset (recorded in `paper_defaults`)."""
    common = {k: v for k, v in flat.items() if k in RunConfig.model_fields}
    nli = {k: v for k, v in flat.items() if k in NLISource.model_fields}
    own = {k: v for k, v in flat.items() if k not in RunConfig.model_fields and k not in nli}
    named = flat.get("method", RunConfig.model_fields["method"].default)
    applied = method_defaults(named, common, own)
    for key, value, _ in applied:
        (common if key in RunConfig.model_fields else own)[key] = value
    try:
        settings, source = RunConfig(**common), NLISource(**nli)
    except ValidationError as exc:
        raise one_line_error(exc, where) from None
    method = get_method(settings.method)
    try:
        params = method.Params.model_validate(own)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "extra_forbidden" and len(first["loc"]) == 1:
            name, method_name = str(first["loc"][0]), settings.method
            known = [*RunConfig.model_fields, *NLISource.model_fields, *field_names(method.Params)]
            hint = did_you_mean(
                name, known, f"`harness methods --method {method_name}` lists its fields", 0.6
            )
            raise HarnessError(
                f"{where}: field '{name}' is neither a run field nor a parameter of method '{method_name}'; "
                + hint
            ) from None
        raise one_line_error(exc, where, method.Params) from None
    params, stages, fields = method.resolve(params, where)
    method.check(params, stages, where)
    run = ResolvedRun(settings, method, params, variant, tuple(applied), stages, fields, source)
    run.scorer.check_metric(run, where)
    return run
