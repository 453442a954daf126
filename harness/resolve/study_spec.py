"""A study's YAML: `base` holds run fields (common ones and the method's own, e.g. `lambda`), `search`
names the fields Optuna varies, and each profile overrides both. `variants` are named configurations,
each with its own method and fields (Chen Table 1: baseline / contrastive-first / supervised-first /
fusion), searched as one categorical dimension `variant` crossed with `search`.

A trial's fields, later ones winning: study base, profile base, the variant's fields (the study's, then
the profile's overrides of that variant), the searched values. `load_study` validates every grid point
of every variant before anything runs; a profile's `only` runs a subset of the variants. `seeds: [1, 2, 3]`
runs every grid point once per seed (a `seed` dimension of the grid); the report averages them (mean +-
std, n)."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from harness.config import one_line_error
from harness.errors import HarnessError, did_you_mean, read_utf8
from harness.home import STUDIES_DIR
from harness.resolve.derived import DERIVED_CHANGES, DERIVED_FROM
from harness.resolve.overrides import Override, apply_overrides, describe
from harness.tracking.metric_names import undeclared
from harness.yaml_input import read_yaml

if TYPE_CHECKING:  # resolving runs imports every method (torch): only when a trial is resolved
    from harness.resolve.run_spec import ResolvedRun


class Range(BaseModel):
    """A continuous or integer range for TPE: {low, high, log, step, int}."""

    model_config = ConfigDict(extra="forbid")

    low: float
    high: float
    log: bool = False
    step: float | None = None
    int: bool = False


def _search_space(space: Any) -> Any:
    """Refuse an empty grid list and an upside-down range by name, before pydantic tries each form."""
    if not isinstance(space, dict):
        return space  # pydantic names what it wanted: a mapping of field -> values
    for name, values in space.items():
        if isinstance(values, list) and not values:
            raise ValueError(f"'{name}' has an empty list; give at least one value")
        numbers = isinstance(values, dict) and all(
            isinstance(values.get(k), int | float) for k in ("low", "high")
        )  # text is left to pydantic, which names the field
        if numbers and values["low"] > values["high"]:
            raise ValueError(f"'{name}': low {values['low']} is above high {values['high']}; swap them")
        if numbers and values.get("log") and values["low"] <= 0:
            raise ValueError(f"'{name}': a log range needs low > 0 (got {values['low']})")
    return space


SearchSpace = Annotated[dict[str, list[Any] | Range], BeforeValidator(_search_space)]
VARIANT = "variant"


PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def check_plain_name(kind: str, name: str) -> None:
    """Names that become folders, MLflow experiments and Optuna study names: letters,
    digits, `_`, `-` and `.`, but not `.` or `..` alone (a path out of the folder it names)."""
    if not PLAIN_NAME.fullmatch(name) or set(name) == {"."}:
        raise ValueError(
            f"{kind} {name!r} is not a plain name: use letters, digits, '_', '-' and '.' "
            "(not '.' or '..' alone)"
        )


class StudyObjective(BaseModel):
    """One objective of a multi-objective study: a metric every trial logs at its end (`objective`, the
    best dev score; a final score such as `STS.avg` or `transfer.devavg`; `train.seconds`) and whether
    more or less of it is better."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str
    direction: Literal["maximize", "minimize"] = "maximize"


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    base: dict[str, Any] = Field(default_factory=dict)
    search: SearchSpace | None = None
    n_trials: int | None = Field(None, gt=0)
    seeds: list[int] | None = Field(None, min_length=1, description="overrides the study's seeds")
    objectives: list[StudyObjective] | None = Field(
        None, min_length=2, description="overrides the study's objectives (a smoke profile's cheaper ones)"
    )
    variants: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="overrides of the study's variants, by name (e.g. smaller budgets)"
    )
    only: list[str] | None = Field(
        None, min_length=1, description="run only these variants (a smoke profile's subset of the rows)"
    )


class StudyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    sampler: Literal["grid", "tpe", "nsga2"] = "grid"
    n_trials: int | None = Field(None, gt=0, description="required for tpe and nsga2")
    objectives: list[StudyObjective] | None = Field(
        None,
        min_length=2,
        description="two or more objectives traded off (Optuna's multi-objective study: the trials on the "
        "Pareto front are its result); unset: the method's objective, maximized",
    )
    pruner: Literal["none", "median", "hyperband", "successive_halving"] = Field(
        "none",
        description="stop unpromising trials early on the dev scores they report at each evaluation "
        "(Optuna's pruners); grids are unpruned unless set",
    )
    pruner_startup_trials: int = Field(
        5,
        ge=0,
        description="median pruner: trials that finish unpruned before it compares (Optuna's default)",
    )
    save_top_k: int = Field(
        0,
        ge=0,
        description="save the encoder of every trial that is among the K best when it ends (safetensors, "
        "sentence-transformers layout, the MLflow artifact `model/`), so the study's final K best always "
        "have theirs; `harness export STUDY --top K` writes them out",
    )
    default_profile: str | None = Field(
        None,
        description="the profile run without --profile; unset: `smoke` where the study has one, else its "
        "only profile, else the study's own base (a study needs no profiles)",
    )
    base: dict[str, Any] = Field(default_factory=dict)
    search: SearchSpace = Field(default_factory=dict)
    seeds: list[int] | None = Field(
        None, min_length=1, description="run every grid point once per seed; reports show mean +- std, n"
    )
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict, description="name -> run fields")
    profiles: dict[str, Profile] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> StudyConfig:
        check_plain_name("study name", self.name)
        for name in self.profiles:
            check_plain_name("profile name", name)
        for name in self.variants:
            check_plain_name("variant name", name)
        if self.default_profile is not None and self.default_profile not in self.profiles:
            known = ", ".join(self.profiles) or "none: drop default_profile"
            raise ValueError(f"default_profile '{self.default_profile}' is not one of the profiles ({known})")
        for name, profile in self.profiles.items():
            for unknown in set(profile.variants) - set(self.variants):
                raise ValueError(f"profile '{name}' overrides variant '{unknown}', which 'variants' lacks")
            for unknown in set(profile.only or []) - set(self.variants):
                raise ValueError(f"profile '{name}' runs only variant '{unknown}', which 'variants' lacks")
            if VARIANT in (profile.search or {}) or VARIANT in self.search:
                raise ValueError("'variant' is searched by declaring 'variants:', not in 'search'")
        if self.objectives or any(p.objectives for p in self.profiles.values()):
            if self.pruner != "none":
                raise ValueError("a multi-objective study cannot be pruned (Optuna prunes on one value); "
                                 "set pruner: none")  # fmt: skip
            if self.save_top_k:
                raise ValueError("save_top_k ranks trials by one objective; with several, set save_model: "
                                 "true in base to keep every trial's model")  # fmt: skip
        for objective in [
            *(self.objectives or []),
            *(o for p in self.profiles.values() for o in p.objectives or []),
        ]:
            problem = undeclared(objective.metric)
            if problem:
                raise ValueError(f"objectives: {problem}")
        return self


class ResolvedStudy(BaseModel):
    """A study with one profile applied: what the runner executes."""

    name: str
    profile: str
    sampler: Literal["grid", "tpe", "nsga2"]
    n_trials: int
    objectives: tuple[StudyObjective, ...] = ()
    description: str = Field("", description="the study's description, then its profile's")
    pruner: Literal["none", "median", "hyperband", "successive_halving"] = "none"
    pruner_startup_trials: int = 5
    save_top_k: int = 0
    base: dict[str, Any]
    search: SearchSpace = Field(description="with `variant` first when the study has variants")
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)
    source: str
    path: str
    profiles_available: list[str] = Field(default_factory=list, description="the YAML's profiles")
    profile_changes: list[tuple[str, Any, Any]] = Field(
        default_factory=list,
        description="(field, the profile's value, the study base's or None): what the profile's base changes",
    )
    override_argv: list[str] = Field(
        default_factory=list, description="--set / --search / --eval as given (workers get them again)"
    )
    written_config: dict[str, Any] | None = Field(
        None, description="with overrides: the configuration of the YAML as written (harness.resolve.derived)"
    )
    derived_from: str | None = Field(None, description="a derived study's origin (harness.resolve.derived)")
    changes: str = Field("", description="a derived study: what differs from its origin, old -> new")

    def profile_note(self) -> str:
        """`model=all-MiniLM-L6-v2 (study: unset), max_steps=60 (study: unset)`: what the profile changed."""
        return ", ".join(
            f"{k}={v} (study: {'unset' if was is None else was})" for k, v, was in self.profile_changes
        )

    def profile_tags(self) -> dict[str, str]:
        """Tags for every trial: what the profile's base changed in the study's (`profile.changes`)."""
        return {"profile.changes": self.profile_note()} if self.profile_changes else {}

    @property
    def optuna_name(self) -> str:
        return f"{self.name}.{self.profile}"

    def config(self) -> dict[str, Any]:
        """What defines the study's trials (JSON-able): base, search, sampler, pruner, variants."""
        payload: dict[str, Any] = {
            "base": self.base,
            "search": _jsonable(self.search),
            "sampler": self.sampler,
        }
        if self.pruner != "none":
            payload["pruner"] = f"{self.pruner}/{self.pruner_startup_trials}"
        if self.variants:
            payload["variants"] = self.variants
        if self.objectives:
            payload["objectives"] = [o.model_dump() for o in self.objectives]
        return json.loads(json.dumps(payload, default=str))

    def directions(self) -> list[Literal["maximize", "minimize"]]:
        """Optuna's direction of each objective (one study objective: the method's, maximized)."""
        return [o.direction for o in self.objectives] or ["maximize"]

    def multi_objective(self) -> bool:
        return len(self.objectives) > 1

    def fingerprint(self) -> str:
        """Hash of `config()`: a changed configuration must not silently resume (harness.resolve.derived)."""
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def note(self) -> str:
        """The study's description for the MLflow UI, and for a derived study its origin and changes."""
        derived = f"Derived from {self.derived_from}: {self.changes}." if self.derived_from else ""
        return " ".join(part for part in (self.description, derived) if part)

    def yaml_argument(self) -> str:
        """What names this study's YAML on a command line: its name when it is in studies/, else its path."""
        origin = self.derived_from or self.name
        return origin if Path(self.path) == (STUDIES_DIR / f"{origin}.yaml").resolve() else self.path

    def command(self, verb: str = "run-study", target: str | None = None) -> str:
        """`harness run-study NAME --profile P --set ...`: the command that runs (resumes) this study;
        `target`: the YAML as the user named it (default: its name in studies/, else its path)."""
        named = f" --profile {self.profile}" if self.profiles_available else ""
        extra = f" {self.override_text()}" if self.override_argv else ""
        return f"harness {verb} {target or self.yaml_argument()}{named}{extra}"

    def override_text(self) -> str:
        """`--set max_steps=10`: the command line's changes to the YAML, or ''."""
        return shlex.join(self.override_argv)

    def identity_tags(self) -> dict[str, str]:
        """Tags of a study's parent run: where its YAML is, and for a derived study its origin and changes."""
        tags = {"study.path": self.path}
        if self.override_argv:
            tags["study.overrides"] = self.override_text()
        if self.derived_from:
            tags |= {DERIVED_FROM: self.derived_from, DERIVED_CHANGES: self.changes}
        return tags

    def grid(self) -> dict[str, list[Any]]:
        return {k: v for k, v in self.search.items() if isinstance(v, list)}

    def resolve(self, values: dict[str, Any]) -> ResolvedRun:
        """The run of one trial: the base fields, its variant's fields, then this trial's `values`."""
        values = dict(values)
        variant = values.pop(VARIANT, None)
        where = f"study {self.name} ({self.profile})" + (f", variant {variant}" if variant else "")
        own = self.variants[variant] if variant is not None else {}
        from harness.resolve.run_spec import resolve_run

        return resolve_run({**self.base, **own, **values}, where=where, variant=variant)

    def grid_runs(self) -> list[ResolvedRun]:
        """Every grid point resolved (one run without a grid; TPE ranges are resolved per trial)."""
        grid = self.grid()
        return [
            self.resolve(dict(zip(grid, combo, strict=True))) for combo in itertools.product(*grid.values())
        ]


PAPER_PROFILE = "paper"


def point_key(values: dict[str, Any]) -> str:
    """A grid point's searched values as one comparable key (Optuna's stored params or the grid's)."""
    return json.dumps({k: values[k] for k in sorted(values)}, default=str)


def refuse_eval_for_paper(study: ResolvedStudy) -> None:
    """`run-study --eval TASKS` is for quick iteration: refused for the paper profile, whose tables need the
    paper's tasks."""
    if study.profile == PAPER_PROFILE and any(arg == "--eval" for arg in study.override_argv):
        others = ", ".join(p for p in study.profiles_available if p != PAPER_PROFILE)
        raise HarnessError(
            "--eval changes the paper profile's evaluation, which its tables need; drop --eval or run "
            f"another profile ({others})"
        )


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
    hint = did_you_mean(name_or_path, known, f"known studies: {', '.join(known)}", cutoff=0.6)
    raise HarnessError(f"no study {name_or_path!r}; {hint} (or give a .yaml path; see `harness studies`)")


BASE_PROFILE = "base"  # the profile name of a study that has none: its own base and search


def read_raw(path: Path) -> dict[str, Any]:
    """The study file's mapping as YAML gives it (not yet validated)."""
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise HarnessError(f"{path}: expected a mapping with name, base, search and (optional) profiles")
    return raw


def validate_study(raw: dict[str, Any], where: str) -> StudyConfig:
    try:
        return StudyConfig.model_validate(raw)
    except ValidationError as exc:
        raise one_line_error(exc, where) from None


def read_study(path: Path) -> StudyConfig:
    """The validated YAML of a study file (no run is resolved: fast, imports no method)."""
    return validate_study(read_raw(path), str(path))


def default_profile(study: StudyConfig) -> str:
    """The profile run without --profile: the YAML's `default_profile`, else `smoke` (the offline, minutes
    one) where the study has it, else its only profile, else `base` (the study's own base and search)."""
    if study.default_profile is not None:
        return study.default_profile
    if "smoke" in study.profiles:
        return "smoke"
    if len(study.profiles) == 1:
        return next(iter(study.profiles))
    if not study.profiles:
        return BASE_PROFILE
    raise HarnessError(
        f"study {study.name} has profiles {', '.join(study.profiles)} and no default_profile; "
        "choose one with --profile"
    )


def choose_profile(study: StudyConfig, path: Path, profile: str | None) -> tuple[str, Profile]:
    """(name, profile) for `profile` or the default one; a profile-less study's is empty (its base)."""
    chosen = profile or default_profile(study)
    if not study.profiles and chosen == BASE_PROFILE:
        return chosen, Profile()
    if chosen not in study.profiles:
        if not study.profiles:
            raise HarnessError(f"{path}: no profile {chosen!r}: the study has no profiles; drop --profile")
        known = f"choose one of {', '.join(study.profiles)}"
        raise HarnessError(
            f"{path}: no profile {chosen!r}; {did_you_mean(chosen, study.profiles, known, cutoff=0.6)}"
        )
    return chosen, study.profiles[chosen]


def trial_count(study: StudyConfig, prof: Profile) -> int | None:
    """The trials one profile runs: the grid's size (variants x search x seeds), or n_trials for TPE."""
    if study.sampler == "tpe":
        return prof.n_trials or study.n_trials
    search = prof.search if prof.search is not None else study.search
    count = len([v for v in study.variants if prof.only is None or v in prof.only]) if study.variants else 1
    for values in search.values():
        count *= len(values) if isinstance(values, list) else 1
    seeds = prof.seeds if prof.seeds is not None else study.seeds
    return count * len(seeds or [None])


def load_study(
    name_or_path: str, profile: str | None = None, overrides: Sequence[Override] = ()
) -> ResolvedStudy:
    """Read, validate and resolve a study YAML, with the command line's `overrides` (--set, --search)
    applied to its mapping first (harness.resolve.overrides); every grid point is validated before anything
    runs."""
    path = find_study_file(name_or_path)
    raw = read_raw(path)
    study = validate_study(raw, str(path))
    chosen, prof = choose_profile(study, path, profile)
    resolved = _resolve(study, chosen, prof, path)
    if overrides:
        given = list(overrides)
        study = validate_study(apply_overrides(raw, given, chosen), f"{path} with {describe(given)}")
        written, n_trials = resolved.config(), resolved.n_trials
        resolved = _resolve(study, chosen, choose_profile(study, path, chosen)[1], path)
        argv = [token for override in given for token in override.argv]
        if resolved.config() == written and resolved.n_trials == n_trials and "--eval" not in argv:
            raise HarnessError(
                f"{describe(given)} changes nothing profile {chosen} runs (a profile's own base and search "
                "win over the study's: give a run field by its name, e.g. --set lr=1e-5, to set it where "
                "the profile reads it)"
            )
        resolved = resolved.model_copy(update={"override_argv": argv, "written_config": written})
    resolved.grid_runs()
    return resolved


def _resolve(study: StudyConfig, chosen: str, prof: Profile, path: Path) -> ResolvedStudy:
    """The study with profile `chosen` applied (its runs not yet validated)."""
    search = prof.search if prof.search is not None else study.search
    if study.variants:
        search = {VARIANT: [v for v in study.variants if prof.only is None or v in prof.only], **search}
    sampler = study.sampler
    seeds = prof.seeds if prof.seeds is not None else study.seeds
    if seeds is not None:
        if sampler != "grid":
            raise HarnessError(f"{path}: 'seeds' repeats grid points; it needs sampler: grid")
        if "seed" in search:
            raise HarnessError(f"{path}: give the seeds once, in 'seeds' or as 'seed' in 'search', not both")
        search = {**search, "seed": list(seeds)}
    if sampler == "grid" and any(isinstance(v, Range) for v in search.values()):
        raise HarnessError(f"{path}: a grid search needs a list of values for every field in 'search'")
    n_trials = prof.n_trials or study.n_trials
    if sampler == "grid":
        n_trials = 1
        for values in search.values():
            assert not isinstance(values, Range)  # refused just above
            n_trials *= len(values)
    elif n_trials is None:
        raise HarnessError(f"{path}: sampler {sampler} needs n_trials (top level or in the profile)")
    return ResolvedStudy(
        name=study.name,
        profile=chosen,
        description="; ".join(d for d in (study.description, prof.description) if d),
        sampler=sampler,
        n_trials=n_trials,
        objectives=tuple(prof.objectives or study.objectives or ()),
        pruner=study.pruner,
        pruner_startup_trials=study.pruner_startup_trials,
        save_top_k=study.save_top_k,
        base={**study.base, **prof.base},
        search=search,
        variants={name: {**fields, **prof.variants.get(name, {})} for name, fields in study.variants.items()},
        source=read_utf8(path),
        path=str(path.resolve()),
        profiles_available=list(study.profiles),
        profile_changes=[(k, v, study.base.get(k)) for k, v in prof.base.items() if study.base.get(k) != v],
    )
