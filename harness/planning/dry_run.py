"""`harness run-study STUDY --dry-run`: every trial's fields, its training steps and what it needs (the
hub, files, a GPU), read from the YAML and the local data alone. Nothing is written: no Optuna study, no
MLflow store, no model is loaded.

Steps per stage are min(epochs x ceil(examples / batch_size), max_steps). Where a stage packs its
examples into batches by another rule (SNLI groups of pairs, task round robins) the count is marked `~`;
a step budget shorter than the epochs makes it exact."""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterable, Sequence, Sized
from pathlib import Path
from typing import Any, cast

from harness.errors import HarnessError
from harness.resolve.run_spec import ResolvedRun
from harness.resolve.study_spec import ResolvedStudy, point_key

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def model_needs(run: ResolvedRun) -> list[str]:
    """The model, where it is not on this machine (a hub id: downloaded at the first trial)."""
    from harness.encoders.location import resolve_model_name

    if not run.method.needs_encoder:
        return []
    try:
        name = resolve_model_name(run.settings.model)
    except HarnessError:
        return [f"model {run.settings.model} (no such folder)"]
    return [] if Path(name).is_dir() else [f"model {run.settings.model} from the hub"]


def _units(data: Any) -> tuple[int, bool] | None:
    """(training examples in one stage's data, whether batches are plain slices of them), or None where
    the data has no length. SNLI groups count their pairs (batch_size counts pairs) and are packed whole."""
    if not isinstance(data, Sized) or isinstance(data, str | bytes):
        return None
    if not isinstance(data, Iterable):  # a GLUE split: one example an index, batched as slices
        return len(data), True
    items = cast(Iterable[Any], data)
    head = [item for _, item in zip(range(5), items, strict=False)]
    if head and all(isinstance(item, list) for item in head):
        return sum(len(item) for item in items), False
    return len(data), True


def trial_steps(run: ResolvedRun, data_dir: Path) -> tuple[str, list[str]]:
    """A trial's training steps as `planned_steps` counts them ('0' for a method that trains nothing, '?'
    where its data cannot be read here), and what it needs that is not here (the data's error, a method's
    optional input)."""
    from harness.methods.base import DataSources

    sources = DataSources(data_dir, None)
    if not run.method.trains:
        return "0", run.method.needs(run, sources)
    try:
        return planned_steps(run, run.method.load_train_data(run, sources)), []
    except Exception as exc:  # offline: hub data sets fail here, and so does a missing file
        return "?", [f"training data: {str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__}"]


def known_steps(steps: str) -> int:
    """'~60' or '60' -> 60; '?' -> 0 (a total counts what is known)."""
    return int(steps.lstrip("~")) if steps.lstrip("~").isdigit() else 0


def planned_steps(run: ResolvedRun, data: Any) -> str:
    """The run's training steps over all its stages, e.g. '60' or '~1200'; '?' where unknown."""
    from harness.methods.pipeline import PipelineData, PipelineMethod

    s = run.settings
    if isinstance(data, PipelineData) and issubclass(run.method, PipelineMethod):
        specs = run.stages
        stages = [(spec.schedule(s), d) for spec, d in zip(specs, data.stages, strict=True)]
    else:
        stages = [((s.epochs, s.lr, s.batch_size, s.max_steps), data)]
    total, exact = 0, True
    for (epochs, _lr, batch, budget), stage_data in stages:
        counted = _units(stage_data)
        budget = budget or None
        if counted is None:
            if budget is None:
                return "?"
            total, exact = total + budget, False  # at most the budget
            continue
        units, plain = counted
        full = epochs * math.ceil(units / batch)  # packing whole groups only adds batches
        if budget is not None and budget <= full:
            total += budget
        else:
            total, exact = total + full, exact and plain
    return f"{total}" if exact else f"~{total}"


def describe_plan(study: ResolvedStudy, data_dir: Path, finished: Sequence[dict[str, Any]] = ()) -> list[str]:
    """Lines for the terminal: a header, then per trial its searched values, steps and needs; the grid
    points among `finished` (the stored study's finished trials) are marked done and not counted."""

    os.environ.update(OFFLINE)  # a dry run downloads nothing: what fails offline needs the hub
    lines = [
        f"study {study.name}, profile {study.profile}: {study.n_trials} trial(s), sampler {study.sampler}"
        + (f" ({study.description})" if study.description else ""),
        f"data: {data_dir}" + ("" if data_dir.is_dir() else "  (MISSING: give --data-dir)"),
    ]
    if study.sampler != "grid":
        lines.append("TPE: the searched values are drawn per trial; the fields below are the base's")
    grid = study.grid()
    runs = study.grid_runs()
    if study.profile_changes:
        lines.append(f"profile {study.profile} sets: {study.profile_note()}")
    notes = {(r.paper_defaults_note(), r.method.run_defaults_source) for r in runs if r.paper_defaults}
    for note, source in sorted(notes):
        lines.append(f"paper defaults (fields the study leaves unset): {note} [{source}]")
    lines.append("every trial: " + ", ".join(f"{k}={v}" for k, v in study.base.items()))
    for name, fields in study.variants.items():
        lines.append(f"variant {name}: " + ", ".join(f"{k}={v}" for k, v in fields.items()))
    for scoring in dict.fromkeys(run.plan.scoring for run in runs):  # each distinct one, from the plans
        tasks = scoring.final_tasks
        shown = (
            f" on {len(tasks)} task(s): {', '.join(tasks[:3])}{', ...' if len(tasks) > 3 else ''}"
            if tasks
            else ""
        )
        lines.append(f"scored by {scoring.scorer}: selects on dev.{scoring.target}; logs "
                     f"{len(scoring.final_metrics)} final metric(s){shown}")  # fmt: skip
    order = list(range(len(runs)))
    if study.sampler == "grid" and grid:
        from harness.study.optuna_study import grid_seed

        order = grid_order(study)
        lines.append(
            f"trial numbers as a new study gives them (Optuna shuffles the grid, seed {grid_seed(study)}; "
            "several --workers start them in any order)"
        )
    done = {point_key(values) for values in finished}
    total_known = done_count = 0
    for number, index in enumerate(order):
        run = runs[index]
        values = dict(zip(grid, _combo(grid, index), strict=True)) if grid else {}
        shown = " ".join(f"{k}={v}" for k, v in values.items()) or "(the base)"
        if point_key(values) in done:
            done_count += 1
            lines.append(f"  trial {number}: {shown}  done (finished here before; not run again)")
            continue
        steps, needs = trial_steps(run, data_dir)
        needs = model_needs(run) + needs
        total_known += known_steps(steps)
        need = f"  needs: {'; '.join(needs)}" if needs else ""
        lines.append(f"  trial {number}: {shown}  steps {steps}{need}")
    if done_count:
        lines.append(
            f"{done_count} of {len(runs)} trial(s) already done here; {len(runs) - done_count} to run"
        )
    lines.append(f"training steps to run: {total_known} (where known); {_device_line()}")
    return lines


def grid_order(study: ResolvedStudy) -> list[int]:
    """Per trial number of a new grid study, the index of its point in `grid_runs` (itertools.product
    order), as the study's own sampler gives them (harness.study.optuna_study.asked_points)."""
    from harness.study.optuna_study import asked_points

    grid = study.grid()
    index = {combo: i for i, combo in enumerate(itertools.product(*grid.values()))}
    return [index[tuple(values[k] for k in grid)] for values, _ in asked_points(study)]


def _combo(grid: dict[str, list[Any]], number: int) -> list[Any]:
    """The `number`-th point of the grid in itertools.product order (as `grid_runs` lists them)."""
    sizes = [len(v) for v in grid.values()]
    picks = []
    for size in reversed(sizes):
        picks.append(number % size)
        number //= size
    return [values[i] for values, i in zip(grid.values(), reversed(picks), strict=True)]


def _device_line() -> str:
    """The GPUs here as the NVIDIA driver names them (nvidia-smi: the dry run loads no torch)."""
    import shutil
    import subprocess

    names: list[str] = []
    if shutil.which("nvidia-smi"):
        try:
            answer = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                    capture_output=True, text=True, timeout=10)  # fmt: skip
            names = [line.strip() for line in answer.stdout.splitlines() if line.strip()]
        except (OSError, subprocess.SubprocessError):
            names = []
    if names:
        return f"GPU here: {names[0]}" + (f" (+{len(names) - 1} more)" if len(names) > 1 else "")
    return "no GPU here: training runs on the CPU (paper profiles are sized for a GPU)"
