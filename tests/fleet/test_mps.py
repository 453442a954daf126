"""CUDA MPS for `--trials-per-gpu K` (harness.fleet.mps): a running daemon used as it is, one started and
stopped for the run, and one line where it cannot be had. No GPU here: a stand-in `nvidia-cuda-mps-control`
on PATH does what the real one does to its pipe folder (`-d` makes the `control` pipe, `quit` on stdin
removes it), or fails as a GPU owned by another user's MPS server makes it fail."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.fleet.mps import gpu_sharing

STAND_IN = f"""#!{sys.executable}
import os, pathlib, sys
pipes = pathlib.Path(os.environ["CUDA_MPS_PIPE_DIRECTORY"])
logs = pathlib.Path(os.environ.get("CUDA_MPS_LOG_DIRECTORY", pipes))
record = pathlib.Path(os.environ["STAND_IN_RECORD"])
if sys.argv[1:] == ["-d"]:
    if os.environ.get("STAND_IN_REFUSES"):
        line = "[2026-11-28] ERROR: An MPS server of another user runs on device 0"
        (logs / "control.log").write_text(line + "\\n")
    else:
        (pipes / "control").touch()
    open(record, "a").write("start\\n")
elif sys.stdin.read().strip() == "quit":
    (pipes / "control").unlink()
    open(record, "a").write("quit\\n")
"""


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in daemon control on PATH; returns the file it records its calls in."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "nvidia-cuda-mps-control"
    script.write_text(STAND_IN)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path / "no-daemon"))  # none running
    record = tmp_path / "calls.txt"
    monkeypatch.setenv("STAND_IN_RECORD", str(record))
    return record


def test_a_started_daemon_serves_the_workers_and_is_stopped(stand_in: Path) -> None:
    sharing = gpu_sharing("auto", ["0", "1"], 4)
    assert sharing.mode == "mps" and "started CUDA MPS" in (sharing.note or "")
    pipes = Path(sharing.environment["CUDA_MPS_PIPE_DIRECTORY"])
    assert (pipes / "control").exists() and Path(sharing.environment["CUDA_MPS_LOG_DIRECTORY"]).is_dir()
    assert pipes.parent.name.startswith("harness-mps-")  # private to this run, not /tmp/nvidia-mps
    folder = pipes.parent
    sharing.stop()
    assert stand_in.read_text().split("\n")[1] == "quit"
    assert not folder.exists()
    sharing.stop()  # a second stop does nothing
    assert stand_in.read_text().count("quit") == 1


def test_a_running_daemon_is_used_and_left_running(
    tmp_path: Path, stand_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = tmp_path / "admins-mps"
    running.mkdir()
    (running / "control").touch()
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(running))
    sharing = gpu_sharing("auto", ["0"], 2)
    assert sharing.mode == "mps" and sharing.environment == {"CUDA_MPS_PIPE_DIRECTORY": str(running)}
    sharing.stop()
    assert (running / "control").exists() and not stand_in.exists()  # never started nor stopped


def test_without_mps_one_line_says_why_and_the_trials_time_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-cuda-mps-control
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", str(tmp_path / "no-daemon"))
    sharing = gpu_sharing("auto", ["0"], 4)
    assert sharing.mode == "time-slicing" and sharing.environment == {}
    assert "CUDA MPS unavailable (nvidia-cuda-mps-control is not on PATH)" in (sharing.note or "")
    assert "\n" not in (sharing.note or "")
    with pytest.raises(HarnessError, match="--gpu-sharing mps: cannot start CUDA MPS .* not on PATH"):
        gpu_sharing("mps", ["0"], 4)
    assert gpu_sharing("time-slicing", ["0"], 4).note is None


@pytest.mark.slow
def test_a_daemon_that_does_not_come_up_is_named_with_its_log_line(
    stand_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_REFUSES", "1")
    sharing = gpu_sharing("auto", ["0"], 2)
    assert sharing.mode == "time-slicing" and sharing.folder is None
    assert "An MPS server of another user runs on device 0" in (sharing.note or "")
    with pytest.raises(HarnessError, match="another user"):
        gpu_sharing("mps", ["0"], 2)


def test_one_trial_per_gpu_or_no_gpu_starts_nothing(stand_in: Path) -> None:
    assert gpu_sharing("auto", ["0"], 1).mode == "exclusive"
    assert gpu_sharing("auto", [], 4).mode == "none"
    assert not stand_in.exists()
    with pytest.raises(HarnessError, match="unknown --gpu-sharing 'fast'"):
        gpu_sharing("fast", ["0"], 2)
