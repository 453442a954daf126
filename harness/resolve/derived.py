"""Derived studies: a study whose configuration differs from the one its name already ran with here (an
edited YAML, `--set`, `--search`, `--eval`) runs as a study of its own instead of being refused, named by
what differs, so that changing one field and running again never ends in a dead end and never mixes two
configurations' trials in one table.

The reference is the configuration the study's name first ran with in this Optuna storage (stored on the
Optuna study as the `config` attribute), else the YAML as written (no overrides). A study that differs
from it runs as `NAME--FIELD-VALUE[--FIELD-VALUE...]`: e.g. `my_simcse--max_steps-10`, with a short hash
when the name would be long. The same command gives the same name, so it resumes. `--fresh` on an edited
YAML (no overrides) replaces the study of the YAML's own name instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from optuna.storages import BaseStorage

    from harness.resolve.study_spec import ResolvedStudy
    from harness.tracking.tracker import Tracker

CONFIG = "config"  # the Optuna study attribute holding the configuration it was created with
DERIVED_FROM, DERIVED_CHANGES = "derived_from", "derived.changes"  # tags of a derived study's runs
MAX_NAME = 80
SEPARATOR = "--"


@dataclass(frozen=True)
class Change:
    """One field that differs: its path (`max_steps`, `search.temperature`, `variants.fusion.lr`)."""

    field: str
    old: Any
    new: Any

    def __str__(self) -> str:
        field = "seeds" if self.field == "search.seed" else self.field  # `seeds:` becomes a searched seed
        return f"{field} {_shown(self.old)} -> {_shown(self.new)}"

    def slug(self) -> str:
        """`max_steps-10`: the field and its new value, in the characters a study name allows."""
        value = self.new
        if isinstance(value, list):
            value = "-".join(_compact(v) for v in value)
        elif isinstance(value, dict):
            value = "-".join(f"{k}-{_compact(v)}" for k, v in sorted(value.items()))
        else:
            value = "unset" if value is _UNSET else _compact(value)
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self.field.removeprefix('search.')}-{value}")


class _Unset:
    def __repr__(self) -> str:
        return "unset"


_UNSET: Any = _Unset()
SEED = "seed"  # the run field seeds search (a study's `seeds` are its grid's `search.seed`)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)


def _shown(value: Any) -> str:
    return "unset" if value is _UNSET else _compact(value)


def _flatten(config: dict[str, Any]) -> dict[str, Any]:
    """{'base': {'lr': 1}, 'search': {'t': [..]}} -> {'lr': 1, 'search.t': [..]}: base fields by name."""
    flat: dict[str, Any] = {}
    for section, content in config.items():
        if section == "base":
            flat.update(content)
        elif section == "variants":
            for variant, fields in content.items():
                flat.update({f"variants.{variant}.{k}": v for k, v in fields.items()})
                flat.setdefault(f"variants.{variant}", "defined")
        elif isinstance(content, dict):
            flat.update({f"{section}.{k}": v for k, v in content.items()})
        else:
            flat[section] = content
    return flat


def changes_between(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """The fields whose values differ between two study configurations (ResolvedStudy.config())."""
    before, after = _flatten(old), _flatten(new)
    keys = sorted(set(before) | set(after))
    return [
        Change(k, before.get(k, _UNSET), after.get(k, _UNSET))
        for k in keys
        if json.dumps(before.get(k, None), sort_keys=True, default=str)
        != json.dumps(after.get(k, None), sort_keys=True, default=str)
    ]


def growth(old: dict[str, Any], new: dict[str, Any]) -> list[Change] | None:
    """The changes from `old` to `new` when they only add grid points (values of a searched field, seeds,
    new variants) to a grid study: every trial of `old` is then a trial of `new` with the same resolved
    run, and the study grows instead of deriving another; None for any other change. Seeds given to a
    study that had none grow it where they hold the seed its trials ran with (`implicit_seed`)."""
    changes = changes_between(old, new)
    if not changes or old.get("sampler") != "grid" or new.get("sampler") != "grid":
        return None
    added = {c.field for c in changes if c.field.startswith("variants.") and c.old is _UNSET}
    for change in changes:
        if change.field == f"search.{SEED}" and change.old is _UNSET:  # seeds given where there were none
            seed = implicit_seed(old)
            if seed is None or not isinstance(change.new, list) or seed not in change.new:
                return None
        elif change.field.startswith("search."):
            grows = isinstance(change.old, list) and isinstance(change.new, list)
            if not grows or not all(value in change.new for value in change.old):
                return None
        elif (
            change.field not in added
            or change.field.count(".") > 1
            and ".".join(change.field.split(".")[:2]) not in added
        ):
            return None
    return changes


def implicit_seed(config: dict[str, Any]) -> int | None:
    """The seed every trial of a study without `seeds` ran with: its base's, else the run default; None
    where a variant sets its own (the trials' seeds then differ)."""
    from harness.config import RunConfig

    if any(SEED in (fields or {}) for fields in (config.get("variants") or {}).values()):
        return None
    found = (config.get("base") or {}).get(SEED)
    return int(found) if found is not None else int(RunConfig.model_fields[SEED].default)


def derived_name(name: str, changes: list[Change]) -> str:
    """`my_simcse--max_steps-10`: the study's name and what differs; long ones end in a hash of it all."""
    full = SEPARATOR.join([name, *(c.slug() for c in changes)])
    if len(full) <= MAX_NAME:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME - 10].rstrip('-_.')}-{digest}"


@dataclass(frozen=True)
class Stored:
    """An Optuna study already in the storage: its fingerprint, and its configuration (None for a study
    made before configurations were stored)."""

    fingerprint: str | None
    config: dict[str, Any] | None


def stored_study(storage: BaseStorage, optuna_name: str) -> Stored | None:
    """What the storage holds of the Optuna study `optuna_name`; None when there is no such study."""
    try:
        study_id = storage.get_study_id_from_name(optuna_name)
    except KeyError:
        return None
    attrs = storage.get_study_user_attrs(study_id)
    return Stored(attrs.get("fingerprint"), attrs.get(CONFIG))


@dataclass(frozen=True)
class Identity:
    """Which study a run-study command runs, and, for a derived one, the line that says why."""

    study: ResolvedStudy
    reason: str = ""


def identify(study: ResolvedStudy, storage: BaseStorage | None, fresh: bool = False) -> Identity:
    """The study to run: `study` itself when its name has not run here or ran with this configuration (or
    `fresh` replaces it after a YAML edit), else its derived study (module docstring)."""
    stored = stored_study(storage, study.optuna_name) if storage is not None else None
    if stored is not None and stored.fingerprint == study.fingerprint():
        return Identity(study)
    if stored is None:  # the name has not run here: the study itself, unless overrides change it
        written = study.written_config  # set with the overrides (harness.resolve.study_spec.load_study)
        changes = (
            changes_between(written, study.config()) if study.override_argv and written is not None else []
        )
        if not changes:
            return Identity(study)
        return _derive(study, changes, f"{study.override_text()} changes the study", storage)
    grown = growth(stored.config, study.config()) if stored.config and not fresh else None
    if grown is not None:  # only grid points added: the same study, grown (harness.study.growth)
        by = study.override_text() or "the edited YAML"
        what = "; ".join(str(c) for c in grown)
        return Identity(study, f"{by} grows study {study.name} ({what}): its ended trials are kept, only the "
                               "new grid points run, all in one table")  # fmt: skip
    if fresh and not study.override_argv:  # --fresh on an edited YAML: the study itself, replaced
        return Identity(study)
    changes = changes_between(stored.config, study.config()) if stored.config else []
    why = (
        f"{study.override_text()} changes the study as it ran here"
        if study.override_argv
        else "the YAML changed since this study ran here"
    )
    return _derive(study, changes, why, storage)


def _derive(study: ResolvedStudy, changes: list[Change], why: str, storage: BaseStorage | None) -> Identity:
    """The derived study, and the line that says so (the changes, and how to replace instead). A name
    another configuration holds already (names list what differs from a reference that can change, and
    fold unusual characters) gets the configuration's fingerprint added: the same on every run."""
    if changes:
        name = derived_name(study.name, changes)
        what = "; ".join(str(c) for c in changes)
    else:  # a study stored before its configuration was: only its fingerprint tells it changed
        name = f"{study.name}{SEPARATOR}{study.fingerprint()[:8]}"
        what = "which fields is unknown: the stored study predates recorded configurations"
    held = stored_study(storage, f"{name}.{study.profile}") if storage is not None else None
    if held is not None and held.fingerprint != study.fingerprint():
        name = f"{name[: MAX_NAME - 10]}-{study.fingerprint()[:8]}"
    derived = study.model_copy(update={"name": name, "derived_from": study.name, "changes": what})
    instead = (
        f"--fresh would replace {study.name}'s runs instead"
        if not study.override_argv
        else f"{study.name} itself stays as it is"
    )
    return Identity(derived, f"{why} ({what}): running it as study {name}; {instead}")


def derived_studies(tracker: Tracker, origin: str) -> list[tuple[str, str]]:
    """(name, what differs) of every study derived from `origin` in this store, by the experiment tag the
    runner sets."""
    found = tracker.experiments(f"tags.`{DERIVED_FROM}` = '{origin}'")
    return sorted((e.name, e.tags.get(DERIVED_CHANGES, "")) for e in found)
