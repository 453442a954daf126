"""Command-line changes to a study: `run-study STUDY --set FIELD=VALUE --search FIELD=V1,V2`.

They edit the YAML's mapping before it is validated, so they are checked exactly as the file is, and a
study changed this way runs as a study of its own (harness.derived names it by what differs). Paths:

    max_steps=10                  a run field (or a method's): wherever the chosen profile takes it from:
                                  the study's base, the profile's base where it sets the field, and every
                                  variant that sets it; a searched field is searched over this one value
    seeds=[1,2,3], n_trials=20    the profile's value where the profile sets one, else the study's
    fusion.lr=1e-5                variant `fusion`'s field (and the profile's override of it, if any)
    base.lr, profiles.paper.base.lr, variants.fusion.lr, sampler, ...
                                  any path into the YAML, taken as written

`--search temperature=0.05,0.1` (or `--search lr={low: 1e-5, high: 1e-4, log: true}` for a TPE range)
sets the searched values of a field in the search the chosen profile uses. Values are YAML (`[1, 2]`,
`true`, `null`); a number written `1e-5`, which YAML 1.1 reads as text, is read as the number.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import yaml

from harness.errors import HarnessError

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
    try:
        value = yaml.safe_load(text) if text else ""
    except yaml.YAMLError as exc:
        raise HarnessError(f"{text!r} is not a YAML value ({str(exc).splitlines()[0]})") from None
    return _numbers(value)


def _numbers(value: Any) -> Any:
    """Text that reads as a number, as the number, in lists and mappings too."""
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, str) and value.strip().lower() not in ("nan", "inf", "-inf", "infinity"):
        try:
            return float(value)
        except ValueError:
            return value
    return value


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
        for path in _targets(edited, written, profile):
            _write(edited, path, written)
    return edited


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
    node[path[-1]] = override.value()


def describe(overrides: list[Override]) -> str:
    """`--set max_steps=10 --search temperature=0.05`: the overrides as a command line gives them."""
    return " ".join(" ".join(o.argv) for o in overrides)
