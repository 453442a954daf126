"""Shared by the benchmarks: a method's training step as a trial runs it, timed; what a figure ran on."""

from __future__ import annotations

import json
from typing import Any

import torch

from harness.device import describe, hardware_tags, pick_device, resolve_precision


def loop_step_seconds(
    config: dict[str, Any], steps: int, data: Any = None, compile_mode: str | None = None
) -> tuple[float, Any]:
    """Seconds per step of the run's first loop stage through the loop's own `train_step` (forward under
    the run's autocast, backward, clipping, fused AdamW), whole batches, after one warm-up step; the model
    and stages built as `harness plan` builds a trial's (harness.planning.cost.build: a random model of a
    known config where the weights are not here). `data`: that stage's training data instead of the run's
    (e.g. `PipelineData(None, [texts])` for a contrastive stage). `compile_mode`: the encoder's forward (and
    so its backward) through `torch.compile(mode=...)` ("default", "reduce-overhead": CUDA graphs,
    "max-autotune", ...), warmed up for 3 steps first (compiling, then CUDA graphs' recording).
    Returns (seconds, the built trial)."""
    from harness.data.paths import resolve_data_dir
    from harness.planning.cost import build, time_stage
    from harness.spec.run_spec import resolve_run

    device = pick_device()
    built, _ = build(resolve_run(config), resolve_data_dir(), device)
    stages = built.stages if data is None else built.model.stages(built.run.settings, data)
    timed = (built.model, stages[0], built.run, device, built.amp_dtype)
    if compile_mode:
        built.encoder.forward = torch.compile(built.encoder.forward, mode=compile_mode, dynamic=False)
        time_stage(*timed, 2, cut_on_cpu=False)
    return time_stage(*timed, steps, cut_on_cpu=False), built


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
