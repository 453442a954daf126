"""What `harness studies` and `harness methods` print: readable listings, one item a block.

`studies` reads the YAML files and the local store's index only (harness.store_index), so it answers at
once; `methods` imports the registries (torch)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from harness.errors import HarnessError, did_you_mean
from harness.home import missing_store
from harness.store_index import finished_trials, local_store


def _width() -> int:
    return max(60, min(shutil.get_terminal_size((110, 20)).columns, 120))


def study_lines(paths: list[Path], tracking_uri: str | None = None) -> Iterator[str]:
    """Per study: its name, its profiles with their trial counts (the default marked *), the finished trials
    in the local store, then its description wrapped below."""
    from harness.study_spec import Profile, default_profile, read_study, trial_count

    store = local_store(tracking_uri)
    done = finished_trials(store) if store else {}
    width = max((len(p.stem) for p in paths), default=0)
    for path in paths:
        try:
            study = read_study(path)
        except HarnessError as exc:
            yield f"{path.stem:{width}s}  (invalid: {exc})"
            continue
        try:
            default = default_profile(study)
        except HarnessError:
            default = None
        profiles = study.profiles or {"base": None}
        shown = []
        for name, prof in profiles.items():
            count = trial_count(study, prof or Profile())
            mark = "*" if name == default else ""
            shown.append(f"{name}{mark} {count if count is not None else '?'}")
        runs = done.get(study.name, {})
        ran = ", ".join(f"{p} {n}" for p, n in sorted(runs.items())) if runs else "-"
        yield f"{study.name:{width}s}  trials: {', '.join(shown):34s}  finished here: {ran}"
        if study.description:
            indent = " " * (width + 2)
            yield textwrap.fill(study.description, _width(), initial_indent=indent, subsequent_indent=indent)
    if store is None:
        yield "(finished trials are counted for a local sqlite store only)"
    elif not store.is_file():
        yield f"({missing_store(store)}; finished trials are counted once a study has run)"
    else:
        yield f"(* the profile run without --profile; finished trials from {store})"


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
    """Every registered method (or `only`): its summary, objective, paper defaults and fields one a line;
    then the stage kinds and objectives (all methods only)."""
    from harness.objectives.registry import OBJECTIVES
    from harness.registry import METHODS
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
        yield f"  objective: {cls.objective}"
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
    for name, cls in STAGES.entries().items():
        yield f"{name}"
        yield textwrap.fill(_summary(cls), wrap, initial_indent="  ", subsequent_indent="  ")
        yield from _field_lines(cls, "    ")
    yield ""
    yield "objectives (a method names one; objective_metric picks its dev score):"
    for name, cls in OBJECTIVES.entries().items():
        yield textwrap.fill(f"{name}: {_summary(cls)}", wrap, subsequent_indent="  ")


def run_field_lines() -> Iterator[str]:
    """The run fields every method shares (RunConfig), one a line."""
    from harness.config import RunConfig
    from harness.data.train_sets import NLISource

    yield "run fields (every method):"
    yield from _field_lines(RunConfig, "    ")
    yield "the SNLI source (read by scl, sbert and sup_nli contrastive stages; any run accepts it):"
    yield from _field_lines(NLISource, "    ")
