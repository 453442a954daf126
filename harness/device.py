"""Device and mixed-precision choice; nothing here assumes a GPU exists or doesn't.

`resolve_precision` is the one place that turns `precision: auto` into a dtype, by what the hardware does
well, never choosing a precision that is slower than fp32:

- CUDA: bf16 where the GPU supports it (Ampere and later), else fp16 (with a GradScaler in training).
- CPU with native bf16 (x86 flags `avx512_bf16` or `amx_bf16`): bf16 autocast.
- CPU without it (AVX2-only x86, AVX-512 parts before Cooper Lake, most laptops): fp32. bf16 autocast is
  emulated there, 5-30x slower than fp32 (all-MiniLM-L6-v2 forward).
- CPU whose flags cannot be read (no /proc/cpuinfo, non-x86): a sub-second matmul micro-benchmark of both
  dtypes decides, cached per machine under `.harness/machine/`.
- Anything else (MPS, XPU, ...): fp32.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import torch

from harness.choices import PRECISIONS
from harness.errors import HarnessError

Resolved = Literal["fp32", "bf16", "fp16"]
DTYPES: dict[str, torch.dtype | None] = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
BENCH_SPEEDUP = 1.2  # bf16 must beat fp32 by this factor in the micro-benchmark to be chosen


def pick_device(preference: str = "auto") -> torch.device:
    """`auto` picks CUDA when present (respecting CUDA_VISIBLE_DEVICES), else CPU."""
    if preference == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(preference)
    except RuntimeError:
        raise HarnessError(f"unknown device {preference!r}; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise HarnessError(f"device {preference!r}: no CUDA GPU is visible here; use auto or cpu")
    return device


def _cpuinfo_field(name: str) -> str | None:
    """The first `name : value` line of /proc/cpuinfo, or None where there is no such file or line."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == name:
            return value.strip()
    return None


def cpu_model() -> str:
    """The CPU's marketing name (/proc/cpuinfo `model name`, else what `platform` knows)."""
    return _cpuinfo_field("model name") or platform.processor() or platform.machine() or "unknown"


def cpu_flags() -> set[str] | None:
    """The x86 feature flags of /proc/cpuinfo, or None where they cannot be read."""
    flags = _cpuinfo_field("flags")
    return set(flags.split()) if flags is not None else None


def cpu_capability() -> str:
    """The SIMD level PyTorch's CPU kernels dispatch to (e.g. AVX2, AVX512)."""
    return str(torch.backends.cpu.get_cpu_capability())


def native_cpu_bf16() -> bool | None:
    """True where the CPU computes bf16 natively, False where it emulates it, None where unknown."""
    flags = cpu_flags()
    if flags is None:
        return None
    return any(flag in flags for flag in NATIVE_BF16_FLAGS)


def _matmul_seconds(dtype: torch.dtype | None, repeats: int = 3, budget_s: float = 0.2) -> float:
    """Seconds per [128 x 384] @ [384 x 1536] matmul under `dtype` autocast (best of `repeats`,
    stopping early once `budget_s` is spent: an emulated dtype shows itself in one call)."""
    a, b = torch.randn(128, 384), torch.randn(384, 1536)
    best, spent = float("inf"), 0.0
    with autocast(torch.device("cpu"), dtype):
        torch.mm(a, b)  # warm-up: kernel selection, weight packing
        for _ in range(repeats):
            start = time.perf_counter()
            torch.mm(a, b)
            elapsed = time.perf_counter() - start
            best, spent = min(best, elapsed), spent + elapsed
            if spent > budget_s:
                break
    return best


def _bench_cache_path() -> Path:
    from harness.home import harness_home

    machine = f"{cpu_model()}|{cpu_capability()}|{torch.__version__}|{torch.get_num_threads()}"
    key = hashlib.sha256(machine.encode()).hexdigest()[:16]
    return harness_home() / "machine" / f"cpu-bf16-{key}.json"


def _read_bench(path: Path) -> bool | None:
    """The cached verdict, or None where the file is missing, unreadable or not ours."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        verdict = json.loads(path.read_text())["bf16_faster"]
        if isinstance(verdict, bool):
            return verdict
    return None


def benchmark_cpu_bf16() -> bool:
    """Whether bf16 autocast matmuls beat fp32 by BENCH_SPEEDUP here; measured once (well under a
    second), then read from `.harness/machine/`. The first process to write the file wins, so
    concurrent workers agree; a directory that cannot be written only costs a re-measurement."""
    path = _bench_cache_path()
    cached = _read_bench(path)
    if cached is not None:
        return cached
    fp32, bf16 = _matmul_seconds(None), _matmul_seconds(torch.bfloat16)
    verdict = fp32 > BENCH_SPEEDUP * bf16
    result = {"cpu": cpu_model(), "fp32_s": fp32, "bf16_s": bf16, "bf16_faster": verdict}
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as file:
                json.dump(result, file)
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)  # atomic, and fails where another process wrote first
        finally:
            os.unlink(tmp)
    cached = _read_bench(path)
    return verdict if cached is None else cached


def resolve_precision(device: torch.device, precision: str = "auto") -> Resolved:
    """The precision a run on `device` uses: `precision` itself unless it is `auto` (see module doc)."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision != "auto":
        return precision  # type: ignore[return-value]
    if device.type == "cuda":
        # Native bf16 from compute capability 8.0 (Ampere); `is_bf16_supported()` also says yes where
        # bf16 is only emulated (Turing, Volta), which is slower than fp16.
        return "bf16" if torch.cuda.get_device_capability(device)[0] >= 8 else "fp16"
    if device.type == "cpu":
        native = native_cpu_bf16()
        if native is None:
            native = benchmark_cpu_bf16()
        return "bf16" if native else "fp32"
    return "fp32"


def autocast_dtype(device: torch.device, precision: str = "auto") -> torch.dtype | None:
    """The autocast dtype of the resolved precision, None for plain fp32."""
    return DTYPES[resolve_precision(device, precision)]


@functools.cache
def _gpu_name(index: int) -> str:
    return torch.cuda.get_device_name(index)


def hardware_tags(device: torch.device, precision: str = "auto") -> dict[str, str]:
    """What a result was computed on, as MLflow tags / JSON fields: the resolved precision, the CPU
    model, its capability and native-bf16 support, the thread count and the GPU where there is one."""
    native = native_cpu_bf16()
    tags = {
        "precision": resolve_precision(device, precision),
        "device": str(device),
        "cpu.model": cpu_model(),
        "cpu.capability": cpu_capability(),
        "cpu.native_bf16": "unknown" if native is None else str(native).lower(),
        "cpu.threads": str(torch.get_num_threads()),
    }
    if device.type == "cuda":
        tags["gpu"] = _gpu_name(device.index if device.index is not None else torch.cuda.current_device())
    for name, env in (("gpu.visible", "CUDA_VISIBLE_DEVICES"), ("gpu.sharing", "HARNESS_GPU_SHARING")):
        if os.environ.get(env):  # a local worker's placement (harness.fleet.placement)
            tags[name] = os.environ[env]
    return tags


def describe(tags: dict[str, str]) -> str:
    """One line for logs and benches: `fp32 on cpu (AMD EPYC, AVX2, native bf16: false, 2 threads)`."""
    where = tags.get("gpu") or tags["cpu.model"]
    return (
        f"{tags['precision']} on {tags['device']} ({where}, {tags['cpu.capability']}, "
        f"native bf16: {tags['cpu.native_bf16']}, {tags['cpu.threads']} threads)"
    )


@contextlib.contextmanager
def autocast(device: torch.device, dtype: torch.dtype | None) -> Iterator[None]:
    """torch.autocast when `dtype` is set, a no-op otherwise."""
    if dtype is None:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield
