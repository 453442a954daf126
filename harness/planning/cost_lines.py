"""`harness plan`'s lines: per trial its steps, dev evaluations, encoded texts and estimated time on the
calibrated device (harness.planning.cost), then the study's total (and with --all the book's). GPU-hours where
the device is a GPU (one GPU per trial: the trials' seconds summed)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from harness.errors import HarnessError
from harness.methods.base import DataSources
from harness.planning.cost import Calibrator, TrialCost, trial_cost
from harness.planning.dry_run import OFFLINE, _combo, grid_order
from harness.resolve.study_spec import ResolvedStudy


def duration(seconds: float) -> str:
    """1.2 s, 14 min, 3.5 h, 2.1 d."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def device_words(calibrator: Calibrator) -> str:
    import torch

    from harness.device import cpu_capability, cpu_model, native_cpu_bf16

    if calibrator.device.type == "cuda":
        return f"GPU {torch.cuda.get_device_name(calibrator.device)}"
    bf16 = {True: "native bf16", False: "no native bf16", None: "bf16 unknown"}[native_cpu_bf16()]
    return f"CPU {cpu_model()} ({cpu_capability()}, {bf16}), {torch.get_num_threads()} thread(s)"


def trial_line(number: int, values: dict, cost: TrialCost, shared: set[str]) -> str:
    shown = " ".join(f"{k}={v}" for k, v in values.items()) or "(the base)"
    stages = " + ".join(f"{s.steps}" for s in cost.stages) or "0"
    steps = f"steps {cost.steps}" + (f" ({stages})" if len(cost.stages) > 1 else "")
    texts = f"{cost.evaluations} dev eval(s) x {cost.dev_texts:,} texts, final {cost.final_texts:,} texts"
    per_step = f"{cost.stages[0].step_seconds:.3f} s/step" if len(cost.stages) == 1 else ""
    fits = f" incl. classifier fits {duration(cost.fit_seconds)}" if cost.fit_seconds else ""
    timing = (
        f"train {duration(cost.train_seconds)} {per_step}".rstrip()
        + f", eval {duration(cost.eval_seconds)}{fits}"
    )
    own = [note for note in cost.notes if note not in shared]
    notes = f"  [{'; '.join(own)}]" if own else ""
    return f"  trial {number}: {shown}  {steps}; {texts}; ~{duration(cost.seconds)} ({timing}){notes}"


def study_plan(study: ResolvedStudy, data_dir: Path, calibrator: Calibrator) -> tuple[list[str], float]:
    """The study's lines and its estimated seconds (trials that cannot be estimated here say why)."""
    os.environ.update(OFFLINE)  # nothing is downloaded: a stand-in is timed where weights are not here
    lines = [
        f"study {study.name}, profile {study.profile}: {study.n_trials} trial(s), sampler {study.sampler}"
    ]
    if study.sampler != "grid":
        lines.append(f"  TPE: {study.n_trials} trials of the base's fields (searched values not drawn yet)")
    grid, total, missing = study.grid(), 0.0, 0
    runs = study.grid_runs()
    repeat = study.n_trials if study.sampler != "grid" else 1
    costs: list[tuple[int, dict, TrialCost | str]] = []
    order = grid_order(study) if study.sampler == "grid" and grid else list(range(len(runs)))
    for number, index in enumerate(order):  # numbered as the run numbers them (as the dry run does)
        values = dict(zip(grid, _combo(grid, index), strict=True)) if grid else {}
        try:
            estimate = trial_cost(runs[index], data_dir, calibrator)
        except (HarnessError, OSError) as exc:
            costs.append((number, values, str(exc).splitlines()[0]))
            continue
        if not runs[index].method.trains:  # e.g. GloVe: what it needs, and that it is skipped without it
            estimate.notes += runs[index].method.needs(runs[index], DataSources(data_dir))
        costs.append((number, values, estimate))
    estimated = [c for _, _, c in costs if isinstance(c, TrialCost) and c.stages]  # trials that train
    shared = set.intersection(*(set(c.notes) for c in estimated)) if estimated else set()
    lines += [f"  every trial: {note}" for note in sorted(shared)]
    for number, values, cost in costs:
        if isinstance(cost, str):
            missing += 1
            lines.append(f"  trial {number}: not estimated: {cost}")
            continue
        total += cost.seconds * repeat
        lines.append(trial_line(number, values, cost, shared))
    gap = f" ({missing} trial(s) not estimated)" if missing else ""
    lines.append(f"  study total: ~{duration(total)}{gpu_hours(total, calibrator)}{gap}")
    return lines, total


def gpu_hours(seconds: float, calibrator: Calibrator) -> str:
    return f" = {seconds / 3600:.2f} GPU-hours" if calibrator.device.type == "cuda" else ""


def plan_lines(studies: list[ResolvedStudy], data_dir: Path, calibrator: Calibrator) -> Iterator[str]:
    """Every study's plan, then (several studies) the book's total; the calibration's own time last."""
    start, total = time.perf_counter(), 0.0
    timed = f"calibrated here: {calibrator.steps} timed step(s) a stage"
    yield f"estimates for {device_words(calibrator)} ({timed})"
    for study in studies:
        lines, seconds = study_plan(study, data_dir, calibrator)
        total += seconds
        yield from lines
    if len(studies) > 1:
        yield f"book total ({len(studies)} studies): ~{duration(total)}{gpu_hours(total, calibrator)}"
    yield (f"the plan took {duration(time.perf_counter() - start)}; not timed: tokenization, MLflow "
           "logging, process start-up")  # fmt: skip
    if calibrator.cache is not None:
        calibrator.cache.save()
        yield calibrator.cache.summary()
