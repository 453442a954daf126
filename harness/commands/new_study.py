"""`harness new NAME --method M`: a commented study YAML that runs offline in minutes, as a start for a
researcher's own study. It has no profiles (the study runs its `base`), a step budget, quick final tasks
where the method is scored on STS, one searched field, and every field of the method listed in comments
with its default."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.methods.base import Method

# per method: fields it needs to run offline on ../shared/data, and a small grid of one field
STARTERS: dict[str, tuple[dict[str, Any], dict[str, list[Any]]]] = {
    "scl": ({"train_data": "snli_local", "max_seq_length": 48}, {"lambda": [0.1, 0.5]}),
    "sbert": ({"train_data": "snli_local", "max_seq_length": 48}, {"lr": [2.0e-5, 5.0e-5]}),
    "unsup_simcse": ({"contrastive_data": ["wiki"]}, {"temperature": [0.05, 0.1]}),
    "sup_simcse": ({"sup_data": ["quora"]}, {"temperature": [0.05, 0.1]}),
    "pipeline": (
        {"stages": [{"contrastive": "unsup", "data": ["wiki"]}, {"finetune": "sst"}]},
        {"lr": [2.0e-5, 5.0e-5]},
    ),  # fmt: skip
    "ensemble": ({"source_study": "chen_supervised"}, {"top_k": [1, 3]}),
    "glove": ({"train_data": "snli_local"}, {}),
}
WIDTH = 110  # the comments' width (the project's line length)
WRAP_ALIGN = 50  # a longer `name: default` wraps its description under the field, not beside it
QUICK = {"model": "all-MiniLM-L6-v2", "max_steps": 20, "eval_every": 10}
HEADER = """\
# {name}: a study of your own, written by `harness new {name} --method {method}`.
#   see its trials first:  harness run-study {target} --dry-run
#   run it:                harness run-study {target}       (re-run the same command to resume)
#   its tables:            harness report {name}            (reports/build/{name}/)
#   browse the runs:       harness ui                       (then open the link run-study prints)
# Every field: `harness methods --method {method}` (the method's), `harness methods --run-fields` (shared).
"""
FOOTER = """\
# profiles (optional): named overrides of base and search, run with --profile NAME; without profiles the
# study runs its base. For example, the full evaluation and no step budget:
# profiles:
#   full:
#     base: {max_steps: null, final_tasks: null}
"""


def study_yaml(name: str, method: str, target: str) -> str:
    """The YAML text of a new study `name` for `method` (validated: every grid point resolves)."""
    from harness.registry import METHODS
    from harness.resolve.run_spec import resolve_run
    from harness.resolve.study_spec import check_plain_name

    methods = METHODS.entries()
    if method not in methods:
        raise HarnessError(
            f"no method {method!r}; choose one of {', '.join(methods)} (see `harness methods`)"
        )
    try:  # the rule run-study applies to the name in the file, in its words
        check_plain_name("study name", name)
    except ValueError as exc:
        raise HarnessError(str(exc)) from None
    fields, search = STARTERS.get(method, ({}, {"lr": [2.0e-5, 5.0e-5]}))
    cls = methods[method]
    base: dict[str, Any] = {"method": method, **(QUICK if cls.needs_encoder else {}), **fields}
    if not cls.needs_encoder:
        base.pop("model", None)
    if resolve_run(base).scorer.reads_final_tasks:
        base["final_tasks"] = ["quick"]
    body = _Block(
        name=name, description=f"{method}: what does this study test? (say it here)", base=_Block(base)
    )
    if search:
        body["search"] = _Block(search)
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)
    text = _comment_base(text, cls, base)
    return HEADER.format(name=name, method=method, target=target) + text + FOOTER


COMMENTS = {
    "model": "offline MiniLM; or a hub id or a local model folder",
    "max_steps": "a step budget for quick iteration; remove it for the full epochs",
    "eval_every": "dev evaluations (the objective) every N steps and at the end",
    "final_tasks": "quick: STS-B test alone; remove for STS12-16, STS-B and SICK-R (the papers' tables)",
    "search": "lists: a grid of every combination; {low, high, log: true} with sampler: tpe and n_trials",
}


def _comment_base(text: str, cls: type, base: dict[str, Any]) -> str:
    """Explain the quick-iteration fields inline, and list the method's other fields commented out at the
    end of `base` (after its last line: a field's value may span lines, as `stages` does)."""
    lines: list[str] = []
    in_base = False
    for line in text.splitlines():
        if in_base and not line.startswith("  "):
            lines += _method_fields(cls, base)
        in_base = line == "base:" or (in_base and line.startswith("  "))
        key = line.split(":", 1)[0]
        note = COMMENTS.get(key.removeprefix("  ")) if key in ("search", f"  {key.strip()}") else None
        lines.append(f"{line}  # {note}" if note else line)
    if in_base:
        lines += _method_fields(cls, base)
    return "\n".join(lines) + "\n"


class _Block(dict):  # type: ignore[type-arg]
    """A mapping written one key a line (PyYAML writes a mapping of scalars inline, `{a: 1, b: 2}`, where
    no comment can follow a field)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(
    _Block, lambda dumper, data: dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=False)
)


def _method_fields(cls: type[Method], base: dict[str, Any]) -> list[str]:
    params = cls.Params.model_fields
    out = [f"  # the fields of {cls.name} (defaults shown; uncomment a field's line to change it):"]
    for key, field in params.items():
        name = field.alias or key
        if name in base or field.is_required():
            continue
        default = field.get_default(call_default_factory=True)
        shown = yaml.safe_dump(default, default_flow_style=True, width=1000).strip()
        out += field_comment(f"{name}: {shown.removesuffix('...').strip()}", field.description or "")
    return out


def field_comment(setting: str, description: str) -> list[str]:
    """`  # name: default  # description`, the description wrapped at a word onto further comment lines
    (a fixed cut once ended them mid-word): uncommenting the first line gives a valid YAML field whose
    description stays a comment."""
    head = f"  # {setting}"
    if not description:
        return [head]
    pad = len(head) + 2 if len(head) <= WRAP_ALIGN else 6  # continuation '#'s under the first one
    return textwrap.wrap(
        description,
        WIDTH,
        initial_indent=f"{head}  # ",
        subsequent_indent="  #" + " " * (pad - 3) + "# ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def write_study(name: str, method: str, out: str | None) -> tuple[Path, Path]:
    """Write the new study to `out` (default studies/NAME.yaml) and its report spec where `harness report`
    finds it (harness.commands.new_report); never over an existing file, and both or neither."""
    from harness.commands.new_report import report_spec_path, report_spec_yaml
    from harness.resolve.study_spec import STUDIES_DIR

    path = Path(out) if out else STUDIES_DIR / f"{name}.yaml"
    target = name if path.parent.resolve() == STUDIES_DIR.resolve() else str(path)
    text = study_yaml(name, method, target)  # the name and method checked first
    spec = report_spec_path(name, path)
    for existing in (p for p in (path, spec) if p.exists()):
        raise HarnessError(f"{existing} exists; choose another NAME or --out PATH")
    written = yaml.safe_load(text)
    report = report_spec_yaml(name, written["base"], written.get("search") or {})
    for where in (path, spec):
        where.parent.mkdir(parents=True, exist_ok=True)
    partials = [(where.with_name(f".{where.name}.partial"), where) for where in (path, spec)]
    for (partial, _), content in zip(partials, (text, report), strict=True):
        partial.write_text(content, encoding="utf-8")
    for partial, where in partials:
        partial.replace(where)
    return path, spec
