"""What `harness studies` and `harness methods` print: readable listings, one item a block.

`studies` reads the YAML files and the local store's index only (harness.tracking.store_index), so it answers
at once; `methods` imports the registries (torch)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.errors import HarnessError, did_you_mean
from harness.home import missing_store
from harness.tracking.store_index import finished_trials, local_store, study_tags, trials_tag


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((110, 20)).columns, 120))


def study_lines(paths: list[Path], tracking_uri: str | None = None) -> Iterator[str]:
    """Per study: its name, its profiles with their trial counts (the default marked *), the finished trials
    in the local store, then its description wrapped below."""
    from harness.resolve.study_spec import Profile, default_profile, read_study, trial_count

    store = local_store(tracking_uri)
    done = finished_trials(store) if store else {}
    tags = study_tags(store) if store else {}
    width = max((len(p.stem) for p in paths), default=0)
    listed: set[str] = set()
    for path in paths:
        listed.add(path.stem)  # an invalid file is still a study of studies/, not one from elsewhere
        try:
            study = read_study(path)
        except HarnessError as exc:
            yield f"{path.stem:{width}s}  (invalid: {exc})"
            continue
        try:
            default = default_profile(study)
        except HarnessError:
            default = None
        profiles: Mapping[str, Profile | None] = study.profiles or {"base": None}
        shown = []
        for name, prof in profiles.items():
            count = trial_count(study, prof or Profile())
            mark = "*" if name == default else ""
            shown.append(f"{name}{mark} {count if count is not None else '?'}")
        listed.add(study.name)
        ran = _ran(done, study.name, tags)
        yield f"{study.name:{width}s}  trials: {', '.join(shown):34s}  finished here: {ran}"
        if study.description:
            indent = " " * (width + 2)
            yield textwrap.fill(study.description, _width(), initial_indent=indent, subsequent_indent=indent)
        yield from _derived_lines(study.name, tags, done, width)
    yield from _elsewhere_lines(listed, tags, done)
    if store is None:
        yield "(finished trials are counted for a local sqlite store only)"
    elif not store.is_file():
        yield f"({missing_store(store)}; finished trials are counted once a study has run)"
    else:
        yield f"(* the profile run without --profile; finished trials from {store})"


def _ran(done: dict[str, dict[str, int]], study: str, tags: dict[str, dict[str, str]]) -> str:
    """`smoke 1 of 2, base 4`: finished trials per profile, out of the trials its last run had (the
    experiment's trials_tag; absent for studies run before it was set)."""
    runs, own = done.get(study, {}), tags.get(study, {})

    def count(profile: str, n: int) -> str:
        total = own.get(trials_tag(profile))
        return f"{profile} {n}" + (f" of {total}" if total is not None else "")

    return ", ".join(count(p, n) for p, n in sorted(runs.items())) if runs else "-"


def _derived_lines(
    origin: str, tags: dict[str, dict[str, str]], done: dict[str, dict[str, int]], width: int
) -> Iterator[str]:
    """The studies derived from `origin` in the store (harness.resolve.derived), a line each under it."""
    for name in sorted(n for n, t in tags.items() if t.get("derived_from") == origin):
        changes = tags[name].get("derived.changes", "")
        yield f"{'':{width}s}  derived: {name} ({changes}); finished here: {_ran(done, name, tags)}"


def _elsewhere_lines(
    listed: set[str], tags: dict[str, dict[str, str]], done: dict[str, dict[str, int]]
) -> Iterator[str]:
    """Studies of the store whose YAML is not in studies/ (a researcher's own file elsewhere), with their
    derived studies: where each YAML is and its finished trials."""
    derived = {n for n, t in tags.items() if t.get("derived_from")}
    others = sorted(n for n in set(done) | set(tags) if n not in listed and n not in derived)
    others = [n for n in others if n in done or "study.path" in tags.get(n, {})]
    if others:
        yield "studies in this store from YAML files outside studies/:"
    for name in others:
        where = tags.get(name, {}).get("study.path", "its YAML path was not recorded")
        yield f"  {name}  ({where}); finished here: {_ran(done, name, tags)}"
        yield from _derived_lines(name, tags, done, 2 + len(name))
    orphans = sorted(n for n in derived if tags[n].get("derived_from") not in listed | set(others))
    for name in orphans:
        origin = tags[name]["derived_from"]
        yield f"  {name}  (derived from {origin}); finished here: {_ran(done, name, tags)}"


def _summary(cls: type) -> str:
    doc = sys.modules[cls.__module__].__doc__ or cls.__doc__ or ""
    return " ".join(doc.strip().split("\n\n")[0].split()) if doc.strip() else ""


def _field_lines(model: type, indent: str) -> Iterator[str]:
    """One line per field: name, default (or 'required'), description, wrapped to the terminal."""
    fields = model.model_fields  # type: ignore[attr-defined]
    width = max((len(f.alias or k) for k, f in fields.items()), default=0)
    for key, field in fields.items():
        name = field.alias or key
        default = "required" if field.is_required() else repr(field.get_default(call_default_factory=True))
        head = f"{indent}{name:{width}s}  {default}"
        text = field.description or ""
        yield textwrap.fill(
            f"{head}  {text}".rstrip(), _width(), subsequent_indent=indent + " " * (width + 4)
        )


def method_lines(only: str | None = None) -> Iterator[str]:
    """Every registered method (or `only`): its summary, scorer, paper defaults and fields one a line;
    then the stage kinds and objectives (all methods only)."""
    from harness.registry import METHODS
    from harness.scoring.registry import SCORERS
    from harness.stages.registry import STAGES

    methods = METHODS.entries()
    if only is not None and only not in methods:
        hint = did_you_mean(only, methods, f"known methods: {', '.join(methods)}")
        raise HarnessError(f"no method {only!r}; {hint}")
    wrap = _width()
    for name, cls in methods.items():
        if only is not None and name != only:
            continue
        yield f"{name}"
        yield textwrap.fill(_summary(cls), wrap, initial_indent="  ", subsequent_indent="  ")
        yield f"  scored by: {cls.scorer}"
        if cls.run_defaults:
            defaults = ", ".join(f"{k}={v}" for k, v in cls.run_defaults.items())
            source = f" ({cls.run_defaults_source})" if cls.run_defaults_source else ""
            yield textwrap.fill(
                f"  paper defaults of run fields: {defaults}{source}", wrap, subsequent_indent="    "
            )
        yield "  fields:"
        yield from _field_lines(cls.Params, "    ")
        yield ""
    if only is not None:
        return
    yield "stage kinds (method: pipeline, stages: [{KIND: VARIETY, field: value, ...}]):"
    for name, stage in STAGES.entries().items():
        yield f"{name}"
        yield textwrap.fill(_summary(stage), wrap, initial_indent="  ", subsequent_indent="  ")
        yield from _field_lines(stage, "    ")
    yield ""
    yield "scorers (a method names one; objective_metric picks its target dev score):"
    for name, scorer in SCORERS.entries().items():
        yield textwrap.fill(f"{name}: {_summary(scorer)}", wrap, subsequent_indent="  ")


def run_field_lines() -> Iterator[str]:
    """The run fields every method shares (RunConfig), one a line."""
    from harness.config import RunConfig
    from harness.data.train_sets import NLISource

    yield "run fields (every method):"
    yield from _field_lines(RunConfig, "    ")
    yield "the SNLI source (read by scl, sbert and sup_nli contrastive stages; any run accepts it):"
    yield from _field_lines(NLISource, "    ")
