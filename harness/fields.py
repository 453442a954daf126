"""Building blocks of parameter models (methods' `Params`, stage specs): forbidding unknown fields,
refusing fields a configuration does not read, and list fields that may come as "a,b,c"."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def split_commas(value: Any) -> Any:
    """Optuna's grid and categorical values must be scalars, so a list may come as "a,b,c"."""
    return [v.strip() for v in value.split(",")] if isinstance(value, str) else value


Source = Literal["wiki", "sst", "quora", "sts"]
Sources = Annotated[list[Source], BeforeValidator(split_commas)]
Probabilities = Annotated[list[Annotated[float, Field(ge=0, lt=1)]], BeforeValidator(split_commas)]


def parse_selection(selection: str) -> tuple[int | None, int | None]:
    """Liao's N+/N- names: '3p3n' -> (3, 3), '3palln' -> (3, None), 'allpalln' -> (None, None)."""
    match = re.fullmatch(r"(all|[1-9]\d*)p(all|\d+)n", selection)
    if not match:
        raise ValueError(
            f"selection {selection!r} is not of the form <N|all>p<N|all>n with N+ >= 1, e.g. 3p3n or allpalln"
        )
    pos, neg = match.groups()
    return (None if pos == "all" else int(pos)), (None if neg == "all" else int(neg))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TemperatureField(BaseModel):
    """The softmax temperature tau of a contrastive loss over cosine similarities, declared once for every
    stage and method that has one: SimCSE's (Gao et al. 2021, 0.05: `contrastive` and `fusion` stages)
    and SupCL-Seq's (Sedghamiz et al. 2021, 0.05: harness.encoders.dropout_views)."""

    temperature: float = Field(0.05, gt=0, description="the contrastive loss's softmax temperature tau")


def refuse_set(params: BaseModel, fields: set[str], why: str) -> None:
    """Refuse fields the YAML set to other values than their defaults that this configuration does not
    read: one line, with the fix. Raised as ValueError so pydantic reports it as the run's validation
    error. A default value is let through, so a logged config (`config.yaml`: every field) reads back."""
    declared = type(params).model_fields
    unused = sorted(
        name
        for name in fields & params.model_fields_set
        if getattr(params, name) != declared[name].get_default(call_default_factory=True)
    )
    if unused:  # named as the YAML names it (an alias: `tau`, `lambda`)
        raise ValueError(f"'{declared[unused[0]].alias or unused[0]}' is not read {why}; remove it")
