"""The benchmarks in bench/ still run against the package (a refactor once broke two of them silently):
the paper-shape step benchmark end to end on the tiny BERT, its FLOPs and JSON; the shared loop timing."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture
def bench_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # the scripts import their shared `steps` module


@pytest.mark.slow
def test_step_mfu_times_the_harness_and_both_trainers_on_the_same_step(
    bench_on_path: None, two_layer_bert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "mfu.json"
    argv = ["step_mfu.py", "--model", str(two_layer_bert), "--batch-size", "4", "--length", "24",
            "--steps", "2", "--precisions", "fp32", "--against", "hf,st", "--compile", "auto",
            "--json", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(BENCH / "step_mfu.py"), run_name="__main__")
    rows = json.loads(out.read_text())["rows"]
    assert [r["side"] for r in rows] == ["harness compile=auto", "HF Trainer", "sentence-transformers"]
    assert rows[0]["compile_seconds_per_shape"] == 0  # auto on a CPU: eager
    # tiny BERT (hidden 32, intermediate 64, 2 layers), 2 views x 4 texts of 24 tokens, 3 x the forward
    flops = 3 * 2 * 8 * 24 * (2 * (4 * 32 * 32 + 2 * 32 * 64) + 4 * 24 * 32)
    for row in rows:
        assert row["seconds_per_step"] > 0 and row["mfu"] == "n/a"  # no GPU peak on a CPU
        assert row["tflops"] == pytest.approx(flops / row["seconds_per_step"] / 1e12)


@pytest.mark.slow
def test_step_overhead_times_the_harness_step_against_a_bare_one(
    bench_on_path: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "overhead.json"
    argv = ["step_overhead.py", "--batch-size", "8", "--steps", "3", "--repeats", "2", "--json", str(out)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(BENCH / "step_overhead.py"), run_name="__main__")
    (row,) = json.loads(out.read_text())["rows"]
    assert row["harness_ms"] > 0 and row["bare_ms"] > 0
    assert row["ratio"] == pytest.approx(row["harness_ms"] / row["bare_ms"])


@pytest.mark.slow
def test_transfer_fits_compares_both_ways_on_a_task(
    bench_on_path: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "fits.json"
    argv = ["transfer_fits.py", "--model", "tiny", "--tasks", "SST5,TREC", "--presets", "prototyping",
            "--embeddings", str(tmp_path / "emb.npy"), "--json", str(out)]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(BENCH / "transfer_fits.py"), run_name="__main__")
    rows = json.loads(out.read_text())["rows"]
    assert [r["task"] for r in rows] == ["SST5", "TREC"]
    for row in rows:  # the same fits both ways: same choices, same predictions
        assert row["same_l2"] and row["items_differ"] == 0 and row["acc_1by1"] == row["acc_tog"]


def test_loop_step_seconds_builds_a_method_as_a_trial_does(bench_on_path: None, tiny_bert: Path) -> None:
    from steps import loop_step_seconds

    config = {"method": "scl", "model": str(tiny_bert), "train_data": "snli_local", "snli_splits": ["dev"],
              "batch_size": 8, "max_seq_length": 32, "precision": "fp32"}  # fmt: skip
    seconds, built = loop_step_seconds(config, steps=1)
    assert seconds > 0 and built.run.method.name == "scl"


@pytest.mark.slow
def test_as_avx2_shows_the_harness_an_avx2_only_cpu() -> None:
    """bench/as_avx2.sh: PyTorch dispatches to AVX2, the harness sees no native bf16, `auto` is fp32."""
    import shutil
    import subprocess

    cpuinfo = Path("/proc/cpuinfo")
    if shutil.which("unshare") is None or not cpuinfo.exists() or " avx2" not in cpuinfo.read_text():
        pytest.skip("needs util-linux's unshare and an x86 CPU with AVX2")
    probe = (
        "import torch; from harness import device as d; "
        "print(d.cpu_capability(), d.native_cpu_bf16(), d.resolve_precision(torch.device('cpu')))"
    )
    done = subprocess.run(
        ["bash", str(BENCH / "as_avx2.sh"), sys.executable, "-c", probe], capture_output=True, text=True
    )
    refused = ("needs root", "unshare:", "mount:")  # not root, or no mount namespaces in this container
    if done.returncode != 0 and any(word in done.stderr for word in refused):
        pytest.skip(f"no mount namespace of its own here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["AVX2", "False", "fp32"]


@pytest.mark.slow
def test_fleet_load_runs_a_small_fleet_to_a_clean_end(tmp_path: Path) -> None:
    """bench/fleet_load.py replaces the trial's training by a sleep (harness.study.trial.train_evaluate_log,
    by name): 2 workers and a coordinator on a real PostgreSQL and the compose MLflow server end with every
    grid point COMPLETE once and its figures measured."""
    from tests.services import postgres_missing

    if postgres_missing():
        pytest.skip(postgres_missing())
    import subprocess

    out = tmp_path / "load.json"
    args = ["--workers", "2", "--trials", "2", "--sleep", "0.5", "--heartbeat", "1", "--json", str(out),
            "--logs", str(tmp_path / "logs")]  # fmt: skip
    command = [sys.executable, str(BENCH / "fleet_load.py"), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (row,) = json.loads(out.read_text())["rows"]
    assert row["check"]["ok"] and row["completed"] == 4 and row["check"]["states"].get("COMPLETE") == 4
    assert row["connections"]["max"] >= 3 and row["bookkeeping_s"]["median"] > 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_two_minute_chaos_schedule_on_four_workers_leaves_a_clean_history(tmp_path: Path) -> None:
    """bench/chaos.py (issue 59): 4 workers on the compose topology (PostgreSQL, the authenticated MLflow
    server) while seed 3's schedule injects every fault kind over 2 minutes; the history check passes:
    every grid point COMPLETE once, one FINISHED run each, every other run accounted for by a fault,
    nothing RUNNING or left behind, the real tiny-BERT points equal to the same points run alone."""
    from tests.services import postgres_missing

    if postgres_missing():
        pytest.skip(postgres_missing())
    import subprocess

    out = tmp_path / "chaos.json"
    args = ["--workers", "4", "--minutes", "2", "--every", "9", "--seed", "3", "--sleep", "2", "--heartbeat",
            "2", "--drain", "240", "--json", str(out), "--logs", str(tmp_path / "logs")]  # fmt: skip
    done = subprocess.run([sys.executable, str(BENCH / "chaos.py"), *args], capture_output=True, text=True,
                          timeout=840)  # fmt: skip
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert "check: OK" in report["lines"]
    kinds = {fault["kind"] for fault in report["faults"]}
    assert kinds == set(report["args"]["faults"].split(",")), kinds  # every kind injected
    assert not report["result"]["lost"] and not report["result"]["twice"]
