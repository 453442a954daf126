"""The one precision decision, forced both ways, and what it records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from harness import device
from harness.device import DTYPES, autocast_dtype, describe, hardware_tags, resolve_precision

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"avx2", "fma"}, "fp32"),  # AVX2-only (AMD EPYC Rome/Milan, older Intel): bf16 is emulated
        ({"avx2", "avx512f", "avx512bw"}, "fp32"),  # AVX-512 without bf16 (Skylake, Ice Lake)
        ({"avx2", "avx512f", "avx512_bf16"}, "bf16"),  # Cooper Lake, Zen 4
        ({"avx2", "avx512f", "amx_bf16", "amx_tile"}, "bf16"),  # Sapphire Rapids
    ],
)
def test_cpu_auto_is_bf16_only_where_native(
    monkeypatch: pytest.MonkeyPatch, flags: set[str], expected: str
) -> None:
    monkeypatch.setattr(device, "cpu_flags", lambda: flags)
    monkeypatch.setattr(device, "benchmark_cpu_bf16", lambda: pytest.fail("flags decide, no benchmark"))
    assert resolve_precision(CPU, "auto") == expected
    assert autocast_dtype(CPU, "auto") == DTYPES[expected]


@pytest.mark.parametrize(("bf16", "expected"), [(True, "bf16"), (False, "fp16")])
def test_cuda_auto_is_bf16_where_supported_else_fp16(
    monkeypatch: pytest.MonkeyPatch, bf16: bool, expected: str
) -> None:
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    assert resolve_precision(CUDA, "auto") == expected


def test_explicit_precision_wins_and_unknown_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device, "cpu_flags", lambda: {"avx2"})
    assert resolve_precision(CPU, "bf16") == "bf16" and resolve_precision(CPU, "fp32") == "fp32"
    assert autocast_dtype(CPU, "fp32") is None
    with pytest.raises(ValueError, match="unknown precision 'half'; choose one of auto, fp32"):
        resolve_precision(CPU, "half")
    assert resolve_precision(torch.device("meta"), "auto") == "fp32"


@pytest.mark.parametrize(("fp32_s", "bf16_s", "expected"), [(1.0, 0.3, "bf16"), (1.0, 0.95, "fp32")])
def test_unknown_flags_are_settled_by_a_cached_micro_benchmark(
    monkeypatch: pytest.MonkeyPatch, harness_home: Path, fp32_s: float, bf16_s: float, expected: str
) -> None:
    monkeypatch.setattr(device, "cpu_flags", lambda: None)
    timed: list[object] = []

    def fake_timing(dtype: torch.dtype | None, *args: object) -> float:
        timed.append(dtype)
        return bf16_s if dtype is torch.bfloat16 else fp32_s

    monkeypatch.setattr(device, "_matmul_seconds", fake_timing)
    assert resolve_precision(CPU, "auto") == expected
    assert resolve_precision(CPU, "auto") == expected
    assert timed == [None, torch.bfloat16]  # measured once, then read from .harness/machine/
    (stored,) = (harness_home / "machine").glob("cpu-bf16-*.json")
    assert json.loads(stored.read_text())["bf16_faster"] is (expected == "bf16")


def test_real_micro_benchmark_agrees_with_the_flags(harness_home: Path) -> None:
    faster = device.benchmark_cpu_bf16()
    if device.native_cpu_bf16() is False:  # emulated bf16 is many times slower
        assert not faster
    assert list((harness_home / "machine").glob("cpu-bf16-*.json"))


def test_hardware_tags_name_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(device, "cpu_flags", lambda: {"avx2"})
    tags = hardware_tags(CPU)
    assert tags["precision"] == "fp32" and tags["cpu.native_bf16"] == "false"
    assert tags["cpu.model"] and tags["cpu.capability"] == torch.backends.cpu.get_cpu_capability()
    assert tags["cpu.threads"] == str(torch.get_num_threads()) and "gpu" not in tags
    assert describe(tags).startswith("fp32 on cpu (")
