"""CUDA MPS (Multi-Process Service) for `run-study --trials-per-gpu K`: the K trials' kernels run on one GPU
at the same time instead of taking turns.

Without MPS the driver time-slices the processes of one GPU: each has the whole GPU for a slice and its
kernels never overlap another's, so K small trials (a MiniLM SimCSE step is a few ms of GPU work between
host launches) leave most of the chip idle; issue 54 measured 1.30x trials per GPU-hour at K = 8 on an
H100. Under MPS one server process owns the GPU's context and runs every client's kernels concurrently on
the free SMs (NVIDIA, "Multi-Process Service", vR550, sections 2.1 and 5.1).

`gpu_sharing` picks how (`--gpu-sharing`, default auto):
- a control daemon already running (the environment's `CUDA_MPS_PIPE_DIRECTORY`, else /tmp/nvidia-mps,
  has its `control` pipe; an administrator's or the cluster's, e.g. Slurm's `--gres=mps` or the NVIDIA
  device plugin's MPS sharing) is used as it is and left running;
- else the harness starts one for this run (`nvidia-cuda-mps-control -d`, a user-level daemon: no root
  needed where the GPU's compute mode is Default) with its pipe and log folders in a private temporary
  folder, hands them to its workers (`CUDA_MPS_PIPE_DIRECTORY`, `CUDA_MPS_LOG_DIRECTORY`) and stops it
  (`quit`) when the workers are done, interrupted or not;
- where it cannot (no `nvidia-cuda-mps-control` on PATH, or the daemon does not come up: another user's
  MPS server owns the GPU, or the compute mode forbids it), one line says so and why, and the trials
  time-slice (`--gpu-sharing mps` makes that an error instead; `time-slicing` never starts a daemon).
Each trial is tagged with the mode it ran under (`gpu_sharing`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError

CONTROL = "nvidia-cuda-mps-control"
DEFAULT_PIPES = Path("/tmp/nvidia-mps")
CHOICES = ("auto", "mps", "time-slicing")


def running_pipes() -> Path | None:
    """The pipe folder of a running control daemon (it has a `control` pipe), or None."""
    pipes = Path(os.environ.get("CUDA_MPS_PIPE_DIRECTORY", DEFAULT_PIPES))
    return pipes if (pipes / "control").exists() else None


@dataclass
class Sharing:
    """How the workers of one run share their GPUs: `mode` ('mps' or 'time-slicing'), the environment
    their processes need, the line said about it (None: nothing to say), and the daemon this run started
    (stopped by `stop`)."""

    mode: str
    environment: dict[str, str] = field(default_factory=dict)
    note: str | None = None
    folder: Path | None = None  # the daemon this run started: its pipes and logs

    def stop(self) -> None:
        """Stop the daemon this run started (`quit` on its control pipe), and remove its folder."""
        if self.folder is None:
            return
        env = {**os.environ, **self.environment}
        try:
            subprocess.run([CONTROL], input=b"quit\n", env=env, timeout=30, capture_output=True, check=False)
            deadline = time.monotonic() + 10
            while (self.folder / "pipes" / "control").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        except (OSError, subprocess.TimeoutExpired):
            pass  # a daemon that will not answer: nothing more a worker's run can do about it
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


def gpu_sharing(choice: str, gpus: list[str], per_gpu: int) -> Sharing:
    """The sharing of `per_gpu` workers on each of `gpus` (module docstring)."""
    if choice not in CHOICES:
        raise HarnessError(f"unknown --gpu-sharing {choice!r}; choose one of {', '.join(CHOICES)}")
    if not gpus or per_gpu < 2:
        return Sharing("exclusive" if gpus else "none")
    if choice == "time-slicing":
        return Sharing("time-slicing")
    running = running_pipes()
    if running is not None:
        note = f"--trials-per-gpu {per_gpu}: a CUDA MPS daemon runs ({running}): the trials share each GPU"
        return Sharing("mps", {"CUDA_MPS_PIPE_DIRECTORY": str(running)}, note)
    started = _start(per_gpu) if shutil.which(CONTROL) else f"{CONTROL} is not on PATH"
    if isinstance(started, Sharing):
        return started
    if choice == "mps":
        raise HarnessError(f"--gpu-sharing mps: cannot start CUDA MPS ({started}); start its daemon "
                           "where the GPUs are (nvidia-cuda-mps-control -d) or use --gpu-sharing "
                           "time-slicing")  # fmt: skip
    note = (f"note: --trials-per-gpu {per_gpu}: CUDA MPS unavailable ({started}); the {per_gpu} trials on "
            "each GPU take turns (time-slicing), which gains little: see the README, 'Several trials on "
            "one GPU'")  # fmt: skip
    return Sharing("time-slicing", note=note)


def _start(per_gpu: int) -> Sharing | str:
    """Start a control daemon with private pipe and log folders: its `Sharing`, or why it did not come up
    within 10 s (the daemon's own last log line where it wrote one)."""
    folder = Path(tempfile.mkdtemp(prefix="harness-mps-"))
    pipes, logs = folder / "pipes", folder / "logs"
    pipes.mkdir()
    logs.mkdir()
    environment = {"CUDA_MPS_PIPE_DIRECTORY": str(pipes), "CUDA_MPS_LOG_DIRECTORY": str(logs)}
    try:
        done = subprocess.run([CONTROL, "-d"], env={**os.environ, **environment}, timeout=30,
                              capture_output=True, check=False)  # fmt: skip
        deadline = time.monotonic() + 10
        while done.returncode == 0 and not (pipes / "control").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if done.returncode == 0 and (pipes / "control").exists():
            note = f"--trials-per-gpu {per_gpu}: started CUDA MPS ({pipes}); it stops when the workers end"
            return Sharing("mps", environment, note, folder)
        error = done.stderr.decode(errors="replace").strip()
        why = _last_line(logs / "control.log") or error or "no control pipe after 10 s"
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = str(exc)
    shutil.rmtree(folder, ignore_errors=True)
    return f"{CONTROL} -d: {why}"


def _last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""
