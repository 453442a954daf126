"""Presets: pipeline methods written as data. A preset is a macro for `stages:`: a `template` (the stages,
with the preset's own defaults written in), the `aliases` that name its flat fields (`contrastive_lr`:
the `lr` of its contrastive stage), the method-level field `groups` it takes (heads, projection), and
named `rules` for what is more than a substitution (`combiner: single` with `single_task: sts` is the
stage `finetune: sts`). At resolution (harness.resolve.run_spec) the flat fields are validated, written into
the template, and the result is validated as `method: pipeline` would be; the run keeps the flat fields as
the ones it logs (MLflow params, config.yaml), so a logged config reads back.

A flat field's type, bounds and description are its stage field's, declared once on the stage spec
(harness/stages/); its default is the template's value where the template writes one, else the stage
field's. A flat field the config sets goes into every stage of its kind that reads it; one that no stage
of this configuration reads (hard_negative_weight with `contrastive: unsup`) is refused by name, unless
it holds its default (a logged config names every field); one set to null keeps the preset's own value
(a config logged when `contrastive_max_steps` still defaulted to null reads back as it ran).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from harness.errors import HarnessError
from harness.fields import Strict
from harness.methods.pipeline import PipelineMethod, PipelineParams
from harness.stages.registry import STAGES, StageSpec, expand

Entries = list[dict[str, Any]]
Rule = Callable[[BaseModel, Entries], set[str]]  # writes into the entries; returns the flat fields it used


def stage_kind(entry: dict[str, Any]) -> str:
    """The stage kind a template entry names (its one registered key)."""
    return next(key for key in entry if key in STAGES.entries())


def alias_field(template: Entries, target: str) -> tuple[Any, FieldInfo]:
    """A flat field for `kind.field`: the stage field's type and description (of the template's variety,
    else of the variety that declares it), the template's value as its default where it writes one."""
    kind, field = target.split(".")
    spec = STAGES.get(kind)
    entry = next(e for e in template if stage_kind(e) == kind)
    if field == kind:
        info = spec.variety_field()
    else:
        declaring = [spec.variety_class(entry), *spec.variety_classes()]
        info = next(c for c in declaring if field in c.model_fields).model_fields[field]
    annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    shown = info.description and (field not in entry or field == kind)  # not "unset: the run's"
    said = f"; {info.description}" if shown else ""
    description = f"the {kind} stage's `{field}`{said}"
    if field in entry and isinstance(entry[field], list | dict):
        value = entry[field]
        default = Field(default_factory=lambda: copy.deepcopy(value), description=description)
    elif field in entry:
        default = Field(entry[field], description=description)
    elif info.default_factory is not None:
        default = Field(default_factory=info.default_factory, description=description)
    else:
        fixed = info.default if info.default is not PydanticUndefined else None
        default = Field(fixed, description=description)
    return annotation, default


class Preset(PipelineMethod):
    """A pipeline method defined by `template`, `aliases`, `groups`, `own_fields` and `rules` (see the
    module docstring); its `Params` (the flat fields) is made from them when the class is defined."""

    template: ClassVar[tuple[dict[str, Any], ...]] = ()
    aliases: ClassVar[dict[str, str]] = {}  # flat field -> "kind.field" of the template's stages
    groups: ClassVar[tuple[type[BaseModel], ...]] = ()  # method-level fields (harness.methods.params)
    own_fields: ClassVar[dict[str, tuple[Any, Any]]] = {}  # flat fields no stage has: name -> (type, Field)
    rules: ClassVar[tuple[Rule, ...]] = ()  # applied to the written-out entries, in order

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.template:
            # Any: mypy checks a **dict's values against create_model's own options (`__config__`, ...) too
            fields: dict[str, Any] = {
                name: alias_field(list(cls.template), target) for name, target in cls.aliases.items()
            }
            own: dict[str, Any] = cls.own_fields
            bases = cls.groups or (Strict,)
            cls.Params = create_model(f"{cls.__name__}Params", __base__=bases, **fields, **own)
            cls.Params.__doc__ = cls.__doc__

    @classmethod
    def entries(cls, params: BaseModel) -> Entries:
        """The stages before the flat fields are written in (sup_simcse: one per `sup_data` entry)."""
        return copy.deepcopy(list(cls.template))

    @classmethod
    def written_out(cls, params: BaseModel) -> Entries:
        """The template with the flat fields the config set written into the stages that read them: the
        rules first, then the varieties (`contrastive: sup_nli`), then every other field."""
        entries = cls.entries(params)
        used = set().union(*(rule(params, entries) for rule in cls.rules))
        targets = {name: tuple(t.split(".")) for name, t in cls.aliases.items()}
        chosen = {n: t for n, t in targets.items() if n in params.model_fields_set and n not in used}
        for name, (kind, field) in chosen.items():
            if field == kind:
                for entry in (e for e in entries if stage_kind(e) == kind):
                    entry[kind] = getattr(params, name)
        specs = [STAGES.get(stage_kind(e)).parse(e) for e in entries]  # which fields each stage reads
        for name, (kind, field) in chosen.items():
            if field == kind:
                continue
            value = getattr(params, name)
            if value is None and any(field in e for e in entries if stage_kind(e) == kind):
                continue  # null keeps the preset's own value (a logged `contrastive_max_steps: null`)
            of_kind = [(e, s) for e, s in zip(entries, specs, strict=True) if s.kind == kind]
            readers = [e for e, s in of_kind if field in type(s).model_fields and field not in s.unread()]
            for entry in readers:
                entry[field] = value
            default = type(params).model_fields[name].get_default(call_default_factory=True)
            if not readers and value != default:
                whose = (
                    f"by a '{of_kind[0][1].variety}' {kind} stage" if of_kind else f"without a {kind} stage"
                )
                raise ValueError(f"'{name}' is not read {whose}; remove it")
        return entries

    @classmethod
    def method_fields(cls, params: BaseModel) -> dict[str, Any]:
        """The method-level fields (`groups`) the config set, for the pipeline's own validation."""
        group_fields = {f for group in cls.groups for f in group.model_fields}
        return {f: getattr(params, f) for f in params.model_fields_set & group_fields}

    @classmethod
    def resolve(
        cls, params: BaseModel, where: str
    ) -> tuple[PipelineParams, tuple[StageSpec, ...], BaseModel]:
        """(the pipeline's params, its stages, the flat fields as logged): the macro written out and
        validated as `method: pipeline`; unset flat fields take the value their stage really has."""
        try:
            entries = cls.written_out(params)
            pipeline = PipelineParams.model_validate({"stages": entries, **cls.method_fields(params)})
        except ValidationError as exc:  # a check across fields of the written-out stages: its message alone
            raise HarnessError(f"{where}: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None
        except ValueError as exc:
            raise HarnessError(f"{where}: {exc}") from None
        stages = tuple(expand(pipeline.stages))
        logged = {}
        for name, target in cls.aliases.items():
            kind, field = target.split(".")
            first = next((s for s in stages if s.kind == kind and field in type(s).model_fields), None)
            if name not in params.model_fields_set and first is not None:
                logged[name] = getattr(first, field)
        for group in cls.groups:  # method-level fields a preset decides when unset (sup_simcse's mlp_at_test)
            for name in set(group.model_fields) - params.model_fields_set:
                logged[name] = getattr(pipeline, name)
        return pipeline, stages, params.model_copy(update=logged)


# Pieces several presets share.

# the flat fields of a preset's contrastive stage (Chen 4.2's composed methods; unsup and sup SimCSE)
CONTRASTIVE_FIELDS = {
    "temperature": "contrastive.temperature",
    "contrastive_limit": "contrastive.limit",
    "length_grouping": "contrastive.length_grouping",
}
COMPOSED_CONTRASTIVE = {
    "contrastive": "contrastive.contrastive",
    "contrastive_epochs": "contrastive.epochs",
    "contrastive_lr": "contrastive.lr",
    "contrastive_batch_size": "contrastive.batch_size",
    "contrastive_max_steps": "contrastive.max_steps",
    "contrastive_data": "contrastive.data",
    "quora_negatives": "contrastive.quora_negatives",
    "hard_negative_weight": "contrastive.hard_negative_weight",
    **CONTRASTIVE_FIELDS,
}
# a composed method's contrastive stage: its own schedule (Chen 4.2), no step budget unless given
COMPOSED_CONTRASTIVE_STAGE = {
    "contrastive": "unsup",
    "epochs": 1,
    "lr": 3e-5,
    "batch_size": 64,
    "max_steps": 0,
}
SINGLE_TASK = {
    "single_task": (
        Literal["sst", "quora", "sts"],
        Field(
            "sst", description="with combiner: single, the one task trained (the stage `finetune: <task>`)"
        ),
    )
}


def single_task(params: BaseModel, entries: Entries) -> set[str]:
    """`combiner: single` with `single_task: sts` is the task stage `finetune: sts` (or `fusion: sts`);
    `single_task` is read with that combiner only."""
    combiner, task = params.combiner, params.single_task  # type: ignore[attr-defined]
    if combiner != "single":
        if "single_task" in params.model_fields_set and task != "sst":
            why = f"with combiner '{combiner}' (only with combiner: single)"
            raise ValueError(f"'single_task' is not read {why}; remove it")
        return set()
    for entry in entries:
        kind = stage_kind(entry)
        if kind in ("finetune", "fusion"):
            entry[kind] = task
    return {"combiner", "single_task"}
