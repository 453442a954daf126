"""The settings every run shares (`RunConfig`), and how a validation error becomes one line.

A method's own fields live in its `Params` (harness/methods/), the SNLI source in
`harness.data.train_sets.NLISource`; `harness.resolve.run_spec.resolve_run` splits a flat dict between the
three.
This module imports no method, so anything may import it.
"""

from __future__ import annotations

import re
import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.choices import Pooling, Precision, TextVariant
from harness.errors import HarnessError, did_you_mean


class RunConfig(BaseModel):
    """Fields every method shares (the method's own fields are its `Params`)."""

    model_config = ConfigDict(extra="forbid")

    method: str = "scl"
    model: str = Field("bert-base-uncased", description="hub id, local directory or all-MiniLM-L6-v2")
    pooling: Pooling = Field(
        "model",
        description="model: the model's own sentence-transformers pipeline (its Pooling mode, then Normalize "
        "if listed; mean without modules); or the harness's pooling alone: mean, cls, cls_before_pooler, ...",
    )
    max_seq_length: int = Field(128, gt=0, description="training batches are truncated to this many tokens")
    eval_max_seq_length: Annotated[int, Field(gt=0)] | Literal["training", "model"] = Field(
        "training",
        description="what the evaluation truncates to: training (max_seq_length, one length for both), model "
        "(the model's position limit: SimCSE's evaluation passes no max length, the SimCSE methods' paper "
        "default), or a number of tokens",
    )
    batch_size: int = Field(64, gt=0, description="sentence pairs per step")
    lr: float = Field(2e-5, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    adam_eps: float = Field(
        1e-8,
        gt=0,
        description="AdamW's epsilon. 1e-8 is PyTorch's and the Hugging Face Trainer's (SimCSE, SupCL-Seq); "
        "a method's paper default replaces it when unset (scl, sbert: transformers.AdamW's 1e-6; the CS224N "
        "methods: the minBERT starter code's AdamW, 1e-6)",
    )
    epochs: int = Field(1, gt=0)
    max_steps: int | None = Field(None, gt=0, description="stop after this many steps (step budget)")
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    lr_schedule: Literal["linear", "constant"] = Field(
        "linear", description="after warm-up: linear decay to 0 per stage, or constant (no schedule)"
    )
    max_grad_norm: float = Field(
        1.0,
        ge=0,
        description="gradient clipping to this global norm; 0 disables. 1.0 is the Hugging Face Trainer's "
        "default; a method's paper default replaces it when unset (scl, sbert and the CS224N methods: 0; "
        "Liao's code and the CS224N starter code do not clip)",
    )
    eval_every: Annotated[int, Field(gt=0)] | Literal["epoch"] = Field(
        1000,
        description="dev evaluations every N steps of a stage, or at the end of each epoch ('epoch'); "
        "always at the end of a stage",
    )
    keep_best: bool = Field(
        True,
        description="evaluate the checkpoint with the best dev score (false: the last step's model, whose "
        "dev score is then the objective)",
    )
    objective_metric: str | None = Field(
        None, description="the dev score that ranks trials and checkpoints; unset: the scorer's default"
    )
    eval_suite: str = Field(
        "sts",
        description="final evaluation of runs scored on embeddings, beside STS: a suite (sts, transfer, "
        "full) or a comma list of tasks (see `harness tasks`)",
    )
    final_tasks: list[str] | None = Field(
        None,
        description="runs scored on embeddings (STS): the tasks scored at the end instead of STS12-16, STS-B "
        "and SICK-R plus eval_suite, e.g. [STSBenchmark] or [quick] (a suite's name; see `harness tasks`); "
        "for quick iteration on an own study: paper profiles score the paper's tasks",
    )
    transfer_classifier: Literal["sklearn", "pytorch", "pytorch_adam"] = Field(
        "sklearn",
        description="transfer tasks' logistic regression: scikit-learn, or SentEval's PyTorch one (Liao), "
        "fitted on the trial's device (CUDA on a GPU worker, as SentEval runs it)",
    )
    transfer_preset: Literal["prototyping", "default"] = Field(
        "prototyping", description="SentEval's k: 5 or 10"
    )
    save_embeddings: bool = Field(
        False,
        description="save the final model's SST dev embeddings (sst_dev_embeddings.npy) for projections",
    )
    train_eval_size: int | None = Field(
        None,
        gt=0,
        description="at each evaluation also score this many training examples per task (a fixed random "
        "draw), logged as train_set.* (the CS224N scorer; David et al. Figs. 2-3)",
    )
    save_model: bool = Field(
        False,
        description="save the evaluated weights as the artifact `model/` (safetensors, sentence-transformers "
        "layout where the pooling has one) for `harness eval --model <downloaded folder>`",
    )
    mteb_results: bool = Field(
        False,
        description="also score MTEB's STS tasks (STS12-16, STSBenchmark) on MTEB's text with the final "
        "weights and log them in MTEB's results layout as the artifact `mteb_results/`",
    )
    stage_cache: bool = Field(
        False,
        description="reuse leading training stages another trial trained with the same inputs (weights, RNG "
        "and counters from a content-addressed cache; identical results), and store this run's",
    )
    stage_cache_dir: str | None = Field(
        None,
        description="the stage cache's folder (shared by workers); unset: HARNESS_STAGE_CACHE, else "
        ".harness/stage-cache",
    )
    stage_cache_mlflow: bool = Field(
        False,
        description="also share stage cache entries as MLflow artifacts (workers that share a tracking "
        "server but no folder)",
    )
    stage_cache_max_gb: float = Field(
        0, ge=0, description="size limit of the stage cache; least recently used entries go first; 0: none"
    )
    log_every: int = Field(10, gt=0)
    eval_batch_size: int = Field(128, gt=0)
    text_variant: TextVariant = "senteval"
    precision: Precision = "auto"
    compile: Literal["auto"] | bool = Field(
        "auto",
        description="torch.compile the training forward, batches padded to 4 length buckets (CUDA graphs "
        "on a GPU; harness.encoders.compiled): auto = on for CUDA, off on a CPU (compiling cost more than it "
        "gained there); numbers differ from the eager step's in float rounding only",
    )
    device: str = "auto"
    seed: int = 42


Loc = tuple[str | int, ...]
# how pydantic names a union's members in an error's `loc` when the model is not known (else the walk
# through the model's annotations tells them from field names such as Range's `int`)
TYPE_TAGS = {"int", "float", "str", "bool", "bytes", "none", "any"}
# member tag -> what the member wants, for "give a list of values or a range {low, high}"
WANTED = {"list": "a list of values", "dict": "a mapping", "int": "an integer", "float": "a number",
          "str": "a string", "bool": "true or false"}  # fmt: skip
# error types that mean the input is not of the member's type at all (not a bound it breaks)
MISMATCH = ("_type", "_parsing", "literal_error", "is_instance_of", "model_attributes_type")


@dataclass(frozen=True)
class Place:
    """Where an error is, as the user wrote it: `path` without pydantic's union-member tags; `tag_at`, the
    index in `loc` of the first tag; `at_tag`, whether `loc` ends at one (the input has the wrong type for
    that member); `owner`, the model whose field the path's last part names (for an unknown field)."""

    path: tuple[str | int, ...]
    tag_at: int | None
    at_tag: bool
    owner: type[BaseModel] | None


def _inner(annotation: Any) -> Any:
    """`Annotated[X, ...]` -> X."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> list[Any]:
    """A union's members other than None (one for `X | None`, which pydantic tags not), else [annotation]."""
    annotation = _inner(annotation)
    if get_origin(annotation) in (Union, types.UnionType):
        return [_inner(a) for a in get_args(annotation) if a is not type(None)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _tag_kind(tag: str) -> str:
    """`list[any]` -> list, `constrained-int` -> int, `literal['a']` -> literal, `Range` -> Range."""
    return tag.split("[")[0].removeprefix("constrained-")


def _member(members: list[Any], tag: str) -> Any:
    """The union member pydantic's `tag` names, or None (Any: nothing below it is checked)."""
    kind = _tag_kind(tag)
    for member in members:
        origin = get_origin(member)
        if _is_model(member) and member.__name__ == tag:
            return member
        if (origin is Literal and kind == "literal") or (origin is not None and origin.__name__ == kind):
            return member
        if isinstance(member, type) and member.__name__ == kind:
            return member
    return None


def field_names(model: type[BaseModel]) -> list[str]:
    """The names a config may give `model`'s fields by: each field's name and its alias."""
    return [name for key, info in model.model_fields.items() for name in (key, info.alias) if name]


def _field(model: type[BaseModel], name: str | int) -> Any:
    """The annotation of `model`'s field called (or aliased) `name`, or None."""
    for key, info in model.model_fields.items():
        if name in (key, info.alias):
            return info.annotation
    return None


def _looks_like_tag(part: str | int) -> bool:
    return isinstance(part, str) and ("[" in part or _tag_kind(part) in TYPE_TAGS)


def place(loc: Loc, model: type[BaseModel] | None) -> Place:
    """Walk `loc` through `model`'s annotations: a part where a union stands is pydantic's tag for the
    member it tried, not something the user wrote. Without the model, tags are told by their shape."""
    path: list[str | int] = []
    tag_at: int | None = None
    at_tag = False
    owner: type[BaseModel] | None = None
    annotation: Any = model
    for index, part in enumerate(loc):
        members = _members(annotation) if annotation is not None else []
        if len(members) > 1 or (annotation is None and _looks_like_tag(part)):
            tag_at = index if tag_at is None else tag_at
            annotation, at_tag = _member(members, str(part)), True
            continue
        at_tag, annotation = False, members[0] if members else None
        owner = annotation if _is_model(annotation) else None
        if owner is not None:
            annotation = _field(owner, part)
        elif get_origin(annotation) in (list, tuple, set, frozenset) and isinstance(part, int):
            annotation = get_args(annotation)[0] if get_args(annotation) else None
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1] if get_args(annotation) else None
        else:
            annotation = None
        path.append(part)
    return Place(tuple(path), tag_at, at_tag, owner)


def shown_path(path: tuple[str | int, ...]) -> str:
    """`("contrastive_data", 0)` -> `contrastive_data[0]`, `("search", "tau")` -> `search.tau`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _message(error: Any) -> str:
    return str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _literals(errors: list[Any]) -> list[str]:
    """The values literal errors accept, in order (`'wiki', 'sst' or 'sts'` -> wiki, sst, sts)."""
    expected = ", ".join(str(e.get("ctx", {}).get("expected", "")) for e in errors)
    return list(dict.fromkeys(re.findall(r"'([^']*)'", expected)))


def _wanted(error: Any, tag: str) -> str:
    """What one union member wants, in words: `a list of values`, `a range {low, high}`, `'epoch'`."""
    if error["type"] == "literal_error":
        return " or ".join(repr(v) for v in _literals([error]))
    found = _model_named(tag) if tag[:1].isupper() else None
    if found is not None:
        required = [name for name, info in found.model_fields.items() if info.is_required()]
        return f"a {tag.lower()} {{{', '.join(required)}}}"
    return WANTED.get(_tag_kind(tag), _message(error))


def _model_named(title: str) -> type[BaseModel] | None:
    """The loaded model class called `title` (pydantic names a failing model only by its title), when
    exactly one is."""
    found, todo = set(), [BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.update([sub] if sub.__name__ == title else [])
            todo.append(sub)
    return found.pop() if len(found) == 1 else None


def one_line_error(error: ValidationError, where: str, model: type[BaseModel] | None = None) -> HarnessError:
    """The first validation error as `where: field 'x': message (got value)`, its path as the user wrote it
    (`contrastive_data[0]`, `search.tau`); a check across fields (a model validator) as `where: message`.
    Where a union's members all fail, one message says what each wants; an unknown field or value gets the
    close names. `model`: the validated class (unset: found by the error's title)."""
    model = model or _model_named(error.title)
    errors = error.errors()
    first = errors[0]
    if not first["loc"]:
        return HarnessError(f"{where}: {_message(first)}")
    if first["type"] == "missing":  # a misspelt required field: the unknown one beside it says more
        beside = [e for e in errors if e["type"] == "extra_forbidden" and e["loc"][:-1] == first["loc"][:-1]]
        first = next(
            (e for e in beside if did_you_mean(str(e["loc"][-1]), [str(first["loc"][-1])], "")), first
        )
    spot = place(first["loc"], model)
    if spot.tag_at is not None:  # the first union that failed: its members' errors
        tagged = first["loc"][: spot.tag_at]
        branches = [e for e in errors if e["loc"][: spot.tag_at] == tagged and len(e["loc"]) > spot.tag_at]
        spots = [place(e["loc"], model) for e in branches]
        went_in = [(e, s) for e, s in zip(branches, spots, strict=True) if not _mismatch(e, s)]
        if went_in:  # the input has one member's shape: that member's own complaint
            first, spot = went_in[0]
        elif all(e["type"] == "literal_error" for e in branches):
            expected = ", ".join(map(repr, _literals(branches)))
            first = {**first, "ctx": {"expected": expected}, "msg": f"Input should be one of {expected}"}
        else:
            assert spot.tag_at is not None  # as tested above: mypy forgets it once a branch reassigns `spot`
            wanted = [_wanted(e, str(e["loc"][spot.tag_at])) for e in branches]
            first = {**first, "msg": f"give {' or '.join(dict.fromkeys(wanted))}"}
    field = shown_path(spot.path)
    if first["type"] == "extra_forbidden":
        known = field_names(spot.owner) if spot.owner else []
        otherwise = f"the fields here: {', '.join(known)}" if known else "remove it"
        hint = did_you_mean(str(spot.path[-1]), known, otherwise, cutoff=0.6)
        return HarnessError(f"{where}: unknown field '{field}'; {hint}")
    if first["type"] == "missing":
        return HarnessError(f"{where}: field '{field}' is missing; add it")
    close = ""
    if first["type"] == "literal_error" and isinstance(first.get("input"), str):
        close = did_you_mean(first["input"], _literals([first]), "")
    hint = f"; {close}" if close else ""
    return HarnessError(f"{where}: field '{field}': {_message(first)} (got {first.get('input')!r}){hint}")


def _mismatch(error: Any, spot: Place) -> bool:
    """The input is not of this union member's type at all (a list given where a range is wanted)."""
    return spot.at_tag and str(error["type"]).endswith(MISMATCH)
