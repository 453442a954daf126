"""Which GPU each local worker gets (`run-study --workers N --trials-per-gpu K`), and how the GPU is shared.

Small models leave a GPU mostly idle with one trial on it (an unsupervised SimCSE step of MiniLM on an
H100 is mostly host launch time); several trials per GPU fill it (Wang et al., "Horizontally Fused
Training Array", MLSys 2021, up to 15x throughput for fused jobs; separate processes are the plain form).
K consecutive workers share a GPU: worker i is pinned to visible GPU (i // K) mod G through
CUDA_VISIBLE_DEVICES. How their kernels share it (CUDA MPS, else time-slicing): harness.fleet.mps.
"""

from __future__ import annotations


def gpu_of_each_worker(workers: int, gpus: list[str], per_gpu: int = 1) -> list[str | None]:
    """CUDA_VISIBLE_DEVICES for each of `workers` workers: `per_gpu` consecutive workers on each GPU in
    turn, round robin when there are more workers than GPUs x per_gpu; None for all where there is no GPU."""
    if per_gpu < 1:
        raise ValueError(f"trials per GPU must be at least 1, got {per_gpu}")
    if not gpus:
        return [None] * workers
    return [gpus[(index // per_gpu) % len(gpus)] for index in range(workers)]


def default_workers(gpus: list[str], per_gpu: int) -> int:
    """`--trials-per-gpu K` without `--workers`: K on each visible GPU (K on the CPU when there is none)."""
    return per_gpu * max(1, len(gpus))
