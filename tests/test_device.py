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


@pytest.mark.parametrize(("capability", "expected"), [((9, 0), "bf16"), ((8, 0), "bf16"), ((7, 5), "fp16")])
def test_cuda_auto_is_bf16_from_ampere_else_fp16(
    monkeypatch: pytest.MonkeyPatch, capability: tuple[int, int], expected: str
) -> None:
    # A Turing GPU (7.5) reports is_bf16_supported() == True through emulation: it must still get fp16.
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a, **k: capability)
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


@pytest.mark.parametrize("content", ["{not json", '{"bf16_faster": "yes"}', "[1]", '{"other": 1}'])
def test_a_damaged_benchmark_file_is_measured_again(
    monkeypatch: pytest.MonkeyPatch, harness_home: Path, content: str
) -> None:
    monkeypatch.setattr(device, "_matmul_seconds", lambda dtype, *a: 0.3 if dtype is torch.bfloat16 else 1.0)
    path = device._bench_cache_path()
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert device.benchmark_cpu_bf16() is True  # measured (the damaged file is not trusted)


def test_the_first_benchmark_verdict_written_wins(
    monkeypatch: pytest.MonkeyPatch, harness_home: Path
) -> None:
    path = device._bench_cache_path()
    real_read = device._read_bench
    calls = {"n": 0}

    def racing_read(p: Path) -> bool | None:
        calls["n"] += 1
        if calls["n"] == 1:  # another worker writes its verdict while this one measures
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('{"bf16_faster": false}')
            return None
        return real_read(p)

    monkeypatch.setattr(device, "_read_bench", racing_read)
    monkeypatch.setattr(device, "_matmul_seconds", lambda dtype, *a: 0.3 if dtype is torch.bfloat16 else 1.0)
    assert device.benchmark_cpu_bf16() is False  # agrees with the file, not with its own measurement
    assert not list(path.parent.glob("*.tmp"))


def test_an_unwritable_home_still_gives_a_verdict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(device, "_bench_cache_path", lambda: blocker / "machine" / "cpu-bf16-x.json")
    monkeypatch.setattr(device, "_matmul_seconds", lambda dtype, *a: 1.0)
    assert device.benchmark_cpu_bf16() is False


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
