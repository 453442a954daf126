"""Shared by the benchmarks: a method's training step as a trial runs it, timed; what a figure ran on."""

from __future__ import annotations

import json
from typing import Any

import torch

from harness.device import describe, hardware_tags, pick_device, resolve_precision


def loop_step_seconds(config: dict[str, Any], steps: int, data: Any = None) -> tuple[float, Any]:
    """Seconds per step of the run's first loop stage through the loop's own `train_step` (forward under
    the run's autocast, backward, clipping, fused AdamW), whole batches, after one warm-up step (every
    timed batch once, when the run's `compile` compiles the forward: harness.encoders.compiled); the model
    and stages built as `harness plan` builds a trial's (harness.planning.cost.build: a random model of a
    known config where the weights are not here). `data`: that stage's training data instead of the run's
    (e.g. `PipelineData(None, [texts])` for a contrastive stage). Returns (seconds, the built trial); the
    built trial's `compile_seconds` is what compiling one batch shape cost (0 when not compiled)."""
    from harness.data.paths import resolve_data_dir
    from harness.planning.cost import build, time_stage
    from harness.resolve.run_spec import resolve_run

    device = pick_device()
    built, _ = build(resolve_run(config), resolve_data_dir(), device)
    stages = built.stages if data is None else built.model.stages(built.run.settings, data)
    compiling: dict[str, float] = {}
    seconds = time_stage(built.model, stages[0], built.run, device, built.amp_dtype, steps, False, compiling)
    built.compile_seconds = compiling.get("seconds", 0.0)
    return seconds, built


def machine_header() -> str:
    """What a figure was measured on: torch, CPU model, SIMD capability, native bf16, threads, GPU, and
    the precision `auto` resolves to here."""
    return f"torch {torch.__version__}; auto = {describe(hardware_tags(pick_device(), 'auto'))}"


def precision_label(precision: str) -> str:
    """`auto (fp32)`: the requested precision and what it resolved to on this machine."""
    resolved = resolve_precision(pick_device(), precision)
    return precision if resolved == precision else f"{precision} ({resolved})"


def write_figures(path: str | None, model: str, rows: list[dict[str, Any]]) -> None:
    """The benchmark's rows as JSON at `path` (`--json`), with the machine they were measured on."""
    if path:
        with open(path, "w") as out:
            json.dump({"machine": machine_header(), "model": model, "rows": rows}, out, indent=1)
