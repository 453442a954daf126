"""Issue 25 item 2: K local workers per GPU (`run-study --trials-per-gpu K`), placed over fake GPU lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.fleet.placement import default_workers, gpu_of_each_worker
from tests.helpers import child_runs, harness_here, tiny_study


@pytest.mark.parametrize(
    ("workers", "per_gpu", "expected"),
    [
        (2, 1, ["0", "1"]),  # one worker per GPU (the default)
        (4, 2, ["0", "0", "1", "1"]),  # two on each
        (8, 4, ["0", "0", "0", "0", "1", "1", "1", "1"]),
        (3, 2, ["0", "0", "1"]),  # fewer workers than places: GPU by GPU
        (6, 2, ["0", "0", "1", "1", "0", "0"]),  # more: round robin again
    ],
)
def test_k_consecutive_workers_share_a_gpu(workers: int, per_gpu: int, expected: list[str]) -> None:
    assert gpu_of_each_worker(workers, ["0", "1"], per_gpu) == expected


def test_without_a_gpu_no_worker_is_pinned_and_k_workers_run_on_the_cpu() -> None:
    assert gpu_of_each_worker(3, [], 2) == [None, None, None]
    assert default_workers([], 2) == 2 and default_workers(["0", "1"], 4) == 8
    with pytest.raises(ValueError, match="at least 1"):
        gpu_of_each_worker(2, ["0"], 0)


@pytest.mark.slow
def test_two_trials_per_gpu_over_two_fake_gpus(tmp_path: Path, tiny_bert: Path) -> None:
    """CUDA_VISIBLE_DEVICES=0,1 on a CPU machine: `--trials-per-gpu 2` starts 4 workers (said on the
    terminal), two pinned to each id; each trial run is tagged with its worker's GPU and the sharing mode
    (the CPU torch ignores the ids and trains on the CPU)."""
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3, 0.5, 0.9]}, name="packed", max_steps=2,
                       final_tasks=["quick"])  # fmt: skip
    env = {"CUDA_VISIBLE_DEVICES": "0,1", "CUDA_MPS_PIPE_DIRECTORY": str(tmp_path / "no-mps")}
    done = harness_here("run-study", study, "--trials-per-gpu", "2", "--no-progress", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "--trials-per-gpu 2: 4 local workers (2 GPU(s))" in done.stdout
    assert "CUDA MPS unavailable" in done.stdout + done.stderr  # no nvidia-cuda-mps-control here
    runs = child_runs("packed")
    assert len(runs) == 4 and {r.data.tags["gpu.sharing"] for r in runs} == {"time-slicing"}
    gpu_of_worker = {r.data.tags["worker"]: r.data.tags["gpu.visible"] for r in runs}
    for run in runs:  # a worker keeps its GPU
        assert run.data.tags["gpu.visible"] == gpu_of_worker[run.data.tags["worker"]] in {"0", "1"}
    for gpu in ("0", "1"):
        assert sum(g == gpu for g in gpu_of_worker.values()) <= 2


def test_trials_per_gpu_needs_local_workers(tmp_path: Path, tiny_bert: Path) -> None:
    study = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="packed0")
    done = harness_here("run-study", study, "--workers", "0", "--trials-per-gpu", "2")
    assert done.returncode == 2 and "with --workers 0 there are none" in done.stderr


def test_the_slurm_script_starts_k_workers_on_its_gpu_and_passes_sigterm_on(tmp_path: Path) -> None:
    """deploy/slurm/harness.sbatch with TRIALS_PER_GPU=3 (a fake `harness` that records its arguments and
    waits): three `harness worker` processes, each with its share of the task's cores, all sent SIGTERM
    when the job step is."""
    import os
    import signal
    import subprocess
    import time

    from tests.services import REPO

    fake = tmp_path / "bin" / "harness"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/bash\necho "$$ $*" >> {tmp_path}/started\n'
                    f'trap \'echo "$$ TERM" >> {tmp_path}/stopped; exit 143\' TERM\n'
                    "while true; do sleep 0.1; done\n")  # fmt: skip
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "TRIALS_PER_GPU": "3",
           "SLURM_ARRAY_TASK_ID": "1", "SLURM_CPUS_PER_TASK": "8", "HARNESS_STORAGE": "postgresql://x",
           "MLFLOW_TRACKING_URI": "http://x:5000"}  # fmt: skip
    job = subprocess.Popen(["bash", str(REPO / "deploy/slurm/harness.sbatch"), "my_study", "paper"], env=env)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len((tmp_path / "started").read_text().splitlines()
                                              if (tmp_path / "started").exists() else []) < 3:  # fmt: skip
        time.sleep(0.1)
    started = (tmp_path / "started").read_text().splitlines()
    assert len(started) == 3
    assert all("worker my_study --profile paper" in line and "--threads 2 " in line for line in started)
    job.send_signal(signal.SIGTERM)
    job.wait(timeout=30)
    stopped = {line.split()[0] for line in (tmp_path / "stopped").read_text().splitlines()}
    assert stopped == {line.split()[0] for line in started}
