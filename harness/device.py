"""Device and mixed-precision choice; nothing here assumes a GPU exists or doesn't."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Literal

import torch

Precision = Literal["auto", "fp32", "bf16", "fp16"]


def pick_device(preference: str = "auto") -> torch.device:
    """`auto` picks CUDA when present (respecting CUDA_VISIBLE_DEVICES), else CPU."""
    if preference == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(preference)


def autocast_dtype(device: torch.device, precision: Precision = "auto") -> torch.dtype | None:
    """The autocast dtype for `precision` on `device`, or None for plain fp32.

    `auto`: bf16 on CPUs and on GPUs that support it, fp16 on older GPUs.
    """
    if precision == "fp32":
        return None
    if precision == "bf16":
        return torch.bfloat16
    if precision == "fp16":
        return torch.float16
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu":
        return torch.bfloat16
    return None


@contextlib.contextmanager
def autocast(device: torch.device, dtype: torch.dtype | None) -> Iterator[None]:
    """torch.autocast when `dtype` is set, a no-op otherwise."""
    if dtype is None:
        yield
        return
    with torch.autocast(device_type=device.type, dtype=dtype):
        yield
