"""Command-line changes to a study: `run-study STUDY --set FIELD=VALUE --search FIELD=V1,V2`.

They edit the YAML's mapping before it is validated, so they are checked exactly as the file is, and a
study changed this way runs as a study of its own (harness.resolve.derived names it by what differs). Paths:

    max_steps=10                  a run field (or a method's): wherever the chosen profile takes it from:
                                  the study's base, the profile's base where it sets the field, and every
                                  variant that sets it; a searched field is searched over this one value
    seeds=[1,2,3], n_trials=20    the profile's value where the profile sets one, else the study's
    fusion.lr=1e-5                variant `fusion`'s field (and the profile's override of it, if any)
    base.lr, profiles.paper.base.lr, variants.fusion.lr, sampler, ...
                                  any path into the YAML, taken as written

`--search temperature=0.05,0.1` (or `--search lr={low: 1e-5, high: 1e-4, log: true}` for a TPE range)
sets the searched values of a field in the search the chosen profile uses. Values are YAML (`[1, 2]`,
`true`, `null`), typed like the value they replace: `--set lr=2e-5` over the YAML's `lr: 2.0e-5` is that
number (YAML 1.1 reads `2e-5` as text), so writing a field's own value changes nothing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.yaml_input import load_yaml

SET, SEARCH, EVAL = "--set", "--search", "--eval"
PROFILE_KEYS = ("seeds", "n_trials")  # top-level keys a profile overrides by the same name
STUDY_KEYS = ("description", "sampler", "n_trials", "pruner", "pruner_startup_trials", "save_top_k",
              "default_profile", "base", "search", "seeds", "variants", "profiles")  # fmt: skip


@dataclass(frozen=True)
class Override:
    """One `--set PATH=VALUE` or `--search FIELD=VALUES` as given on the command line."""

    option: str
    path: str
    text: str

    @property
    def argv(self) -> list[str]:
        """The option as a worker process is given it again."""
        return [self.option, self.text if self.option == EVAL else f"{self.path}={self.text}"]

    def value(self) -> Any:
        if self.option == SEARCH:
            return _search_values(self.text)
        if self.option == EVAL:
            return [task.strip() for task in self.text.split(",") if task.strip()]
        return _scalar(self.text)


def eval_override(tasks: str) -> Override:
    """`run-study --eval TASKS`: every trial's `final_tasks` (a comma list of tasks and suites)."""
    return Override(EVAL, "final_tasks", tasks)


def parse_override(option: str, given: str) -> Override:
    """`FIELD=VALUE` -> an Override; one line when there is no `=` or no field."""
    path, equals, text = given.partition("=")
    path = path.strip()
    if not equals or not path or any(not part for part in path.split(".")):
        raise HarnessError(f"{option} {given!r}: write {option} FIELD=VALUE (e.g. {option} max_steps=10)")
    if option == SEARCH and "." in path and not path.startswith(("search.", "profiles.")):
        raise HarnessError(f"{option} {given!r}: give a searched field by name (e.g. --search lr=1e-5,2e-5)")
    return Override(option, path, text.strip())


def _scalar(text: str) -> Any:
    """A YAML value; text that reads as a number is the number (YAML 1.1 reads `1e-5` as text)."""
    return load_yaml(text, f"value {text[:40]!r}") if text else ""


def _like(old: Any, new: Any) -> Any:
    """`new` typed like the value `old` it replaces: text that reads as a number where `old` is a number
    (or a list or range of numbers), so `2e-5` over `2.0e-5` is equal to it."""
    if isinstance(new, list):
        if isinstance(old, list) and old and all(_is_number(v) for v in old):
            return [_like(old[0], v) for v in new]
        return new
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: _like(old.get(k), v) for k, v in new.items()}
    if isinstance(new, str) and _is_number(old):
        try:
            return float(new)
        except ValueError:
            return new
    return new


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _search_values(text: str) -> Any:
    """`0.05,0.1` -> [0.05, 0.1]; `[..]` or `{low: .., high: ..}` as YAML."""
    if text.startswith(("[", "{")):
        return _scalar(text)
    return [_scalar(part.strip()) for part in text.split(",") if part.strip()]


def apply_overrides(raw: dict[str, Any], overrides: list[Override], profile: str) -> dict[str, Any]:
    """A copy of the study's mapping with each override written where `profile` reads it."""
    edited = copy.deepcopy(raw)
    for override in overrides:
        written = override
        if override.option == SET and "." not in override.path and _searched(edited, override.path, profile):
            written = Override(SEARCH, override.path, f"[{override.text}]")  # searched over this value alone
        elif override.option == SET and override.path == "seed" and _seeded(edited, profile):
            written = Override(SET, "seeds", f"[{override.text}]")  # the study's seeds are a grid dimension
        for path in _targets(edited, written, profile):
            _write(edited, path, written)
    return edited


def _seeded(raw: dict[str, Any], profile: str) -> bool:
    """Whether the study repeats its grid over `seeds` in `profile`."""
    prof = (raw.get("profiles") or {}).get(profile) or {}
    return bool(raw.get("seeds") or (isinstance(prof, dict) and prof.get("seeds")))


def _searched(raw: dict[str, Any], name: str, profile: str) -> bool:
    """Whether the search `profile` uses names the field `name`."""
    prof = (raw.get("profiles") or {}).get(profile) or {}
    search = prof.get("search") if isinstance(prof, dict) and prof.get("search") is not None else None
    return name in (search if search is not None else raw.get("search") or {})


def _targets(raw: dict[str, Any], override: Override, profile: str) -> list[list[str]]:
    """The YAML paths an override writes (a short path can stand for several)."""
    parts = override.path.split(".")
    prof = raw.get("profiles", {}).get(profile) or {}
    if not isinstance(prof, dict):
        prof = {}
    in_profile = ["profiles", profile]
    if override.option == SEARCH:
        if parts[0] == "profiles":
            return [parts]  # profiles.P.search.F as written
        field = parts[-1]
        return [[*in_profile, "search", field] if prof.get("search") is not None else ["search", field]]
    if len(parts) > 1 or parts[0] in STUDY_KEYS and parts[0] not in PROFILE_KEYS:
        variants = raw.get("variants") or {}
        if parts[0] in variants and parts[0] not in STUDY_KEYS:  # variant.field
            own = [["variants", *parts]]
            if parts[-1] in ((prof.get("variants") or {}).get(parts[0]) or {}):
                own.append([*in_profile, "variants", *parts])
            return own
        return [parts]
    name = parts[0]
    if name in PROFILE_KEYS:
        return [[*in_profile, name]] if prof.get(name) is not None else [[name]]
    paths = [["base", name]]
    if name in (prof.get("base") or {}):
        paths.append([*in_profile, "base", name])
    for variant, fields in (raw.get("variants") or {}).items():
        if name in (fields or {}):
            paths.append(["variants", variant, name])
        if name in ((prof.get("variants") or {}).get(variant) or {}):
            paths.append([*in_profile, "variants", variant, name])
    return paths


def _write(raw: dict[str, Any], path: list[str], override: Override) -> None:
    node: Any = raw
    for depth, key in enumerate(path[:-1]):
        child = node.get(key) if isinstance(node, dict) else None
        if child is None:
            child = node[key] = {}
        if not isinstance(child, dict):
            where = ".".join(path[: depth + 1])
            raise HarnessError(f"{override.option} {override.path}: {where} is not a mapping in the study")
        node = child
    node[path[-1]] = _like(node.get(path[-1]), override.value())


def describe(overrides: list[Override]) -> str:
    """`--set max_steps=10 --search temperature=0.05`: the overrides as a command line gives them."""
    return " ".join(" ".join(o.argv) for o in overrides)
