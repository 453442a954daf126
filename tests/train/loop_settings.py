"""The run settings the loop tests pass to `train` (harness.train.loop.LoopSettings)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Settings:
    seed: int = 0
    weight_decay: float = 0.0
    adam_eps: float = 1e-8
    warmup_ratio: float = 0.0
    lr_schedule: str = "linear"
    max_grad_norm: float = 1.0
    log_every: int = 1
    eval_every: int = 1
    keep_best: bool = True
