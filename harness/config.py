"""Validated configuration: one trial's RunConfig, and a study's YAML (StudyConfig with profiles).

A study YAML is flat: `base` holds run fields (common ones below, plus the method's own, e.g. `lambda`),
`search` names the fields Optuna varies, and each profile overrides both.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError
from harness.registry import get_method

STUDIES_DIR = Path(__file__).resolve().parents[1] / "studies"


class RunConfig(BaseModel):
    """Fields every method shares. Method-specific fields live in `method_params`."""

    model_config = ConfigDict(extra="forbid")

    method: str = "scl"
    model: str = Field("bert-base-uncased", description="hub id, local directory or all-MiniLM-L6-v2")
    pooling: Literal["cls", "cls_before_pooler", "mean", "first_last_avg"] = "mean"
    max_seq_length: int = Field(128, gt=0)
    train_data: Literal["snli_local", "snli_hub"] = "snli_hub"
    snli_splits: list[str] = Field(default_factory=lambda: ["dev", "test"], description="for snli_local")
    train_limit: int | None = Field(None, gt=0, description="use only the first N training groups")
    batch_size: int = Field(64, gt=0, description="sentence pairs per step")
    lr: float = Field(2e-5, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    epochs: int = Field(1, gt=0)
    max_steps: int | None = Field(None, gt=0, description="stop after this many steps (step budget)")
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    max_grad_norm: float = Field(1.0, ge=0, description="gradient clipping; 0 disables")
    eval_every: int = Field(1000, gt=0, description="steps between STS-B dev evaluations")
    keep_best: bool = Field(True, description="evaluate the checkpoint with the best dev score")
    log_every: int = Field(10, gt=0)
    eval_batch_size: int = Field(128, gt=0)
    text_variant: Literal["senteval", "raw"] = "senteval"
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    device: str = "auto"
    seed: int = 42
    method_params: dict[str, Any] = Field(default_factory=dict)

    def params(self) -> BaseModel:
        """The method's own validated parameters."""
        return get_method(self.method).Params.model_validate(self.method_params)

    def flat(self) -> dict[str, Any]:
        """Every resolved field in one flat dict (what MLflow logs as params)."""
        common = self.model_dump(exclude={"method_params"})
        return {**common, **self.params().model_dump(by_alias=True)}


def _one_line(error: ValidationError, where: str) -> HarnessError:
    first = error.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "(top level)"
    return HarnessError(f"{where}: field '{field}': {first['msg']} (got {first.get('input')!r})")


def resolve_run_config(flat: dict[str, Any], where: str = "config") -> RunConfig:
    """Split a flat dict into common fields and the method's own, validating both."""
    common_names = set(RunConfig.model_fields) - {"method_params"}
    common = {k: v for k, v in flat.items() if k in common_names}
    own = {k: v for k, v in flat.items() if k not in common_names}
    try:
        config = RunConfig(**common, method_params=own)
    except ValidationError as exc:
        raise _one_line(exc, where) from None
    try:
        config.params()
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "extra_forbidden":
            name = first["loc"][0]
            raise HarnessError(
                f"{where}: field '{name}' is neither a run field nor a parameter of method '{config.method}'"
            ) from None
        raise _one_line(exc, where) from None
    return config


class Range(BaseModel):
    """A continuous or integer range for TPE: {low, high, log, step, int}."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    log: bool = False
    step: float | None = None
    int: bool = False


SearchSpace = dict[str, list[Any] | Range]


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    base: dict[str, Any] = Field(default_factory=dict)
    search: SearchSpace | None = None
    n_trials: int | None = Field(None, gt=0)


class StudyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    sampler: Literal["grid", "tpe"] = "grid"
    n_trials: int | None = Field(None, gt=0, description="required for tpe")
    default_profile: str = "paper"
    base: dict[str, Any] = Field(default_factory=dict)
    search: SearchSpace = Field(default_factory=dict)
    profiles: dict[str, Profile] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> StudyConfig:
        if self.default_profile not in self.profiles:
            raise ValueError(f"default_profile '{self.default_profile}' is not one of the profiles")
        return self


class ResolvedStudy(BaseModel):
    """A study with one profile applied: what the runner executes."""

    name: str
    profile: str
    sampler: Literal["grid", "tpe"]
    n_trials: int
    base: dict[str, Any]
    search: SearchSpace
    source: str
    path: str

    @property
    def optuna_name(self) -> str:
        return f"{self.name}.{self.profile}"

    def fingerprint(self) -> str:
        """Hash of what defines the study's trials: a changed YAML must not silently resume."""
        payload = {"base": self.base, "search": _jsonable(self.search), "sampler": self.sampler}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def grid(self) -> dict[str, list[Any]]:
        return {k: v for k, v in self.search.items() if isinstance(v, list)}

    def run_config(self, values: dict[str, Any]) -> RunConfig:
        return resolve_run_config({**self.base, **values}, where=f"study {self.name} ({self.profile})")


def _jsonable(space: SearchSpace) -> dict[str, Any]:
    return {k: v.model_dump() if isinstance(v, Range) else v for k, v in space.items()}


def find_study_file(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return path
    candidate = STUDIES_DIR / f"{name_or_path}.yaml"
    if candidate.is_file():
        return candidate
    known = sorted(p.stem for p in STUDIES_DIR.glob("*.yaml"))
    raise HarnessError(f"no study {name_or_path!r}; known studies: {', '.join(known)} (or give a .yaml path)")


def load_study(name_or_path: str, profile: str | None = None) -> ResolvedStudy:
    """Read, validate and resolve a study YAML; every grid point is validated before anything runs."""
    path = find_study_file(name_or_path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise HarnessError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise HarnessError(f"{path}: expected a mapping with name, base, search and profiles")
    try:
        study = StudyConfig.model_validate(raw)
    except ValidationError as exc:
        raise _one_line(exc, str(path)) from None
    chosen = profile or study.default_profile
    if chosen not in study.profiles:
        raise HarnessError(f"{path}: no profile {chosen!r}; choose one of {', '.join(study.profiles)}")
    prof = study.profiles[chosen]
    search = prof.search if prof.search is not None else study.search
    sampler = study.sampler
    if sampler == "grid" and any(isinstance(v, Range) for v in search.values()):
        raise HarnessError(f"{path}: a grid search needs a list of values for every field in 'search'")
    n_trials = prof.n_trials or study.n_trials
    if sampler == "grid":
        n_trials = 1
        for values in search.values():
            n_trials *= len(values)
    elif n_trials is None:
        raise HarnessError(f"{path}: sampler tpe needs n_trials (top level or in the profile)")
    resolved = ResolvedStudy(
        name=study.name,
        profile=chosen,
        sampler=sampler,
        n_trials=n_trials,
        base={**study.base, **prof.base},
        search=search,
        source=path.read_text(encoding="utf-8"),
        path=str(path.resolve()),
    )
    grid = resolved.grid()
    for combo in itertools.product(*grid.values()):
        resolved.run_config(dict(zip(grid, combo, strict=True)))
    if not grid:
        resolved.run_config({})
    return resolved
