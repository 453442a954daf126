"""The training forward under torch.compile (issue 54 item 2): on by default on a GPU (`compile: auto`), off
on a CPU, where compiling a trial's graphs took 30-50 s and gained nothing (DESIGN.md, checked Nov 2026);
`compile: true` / `false` choose for either.

A compiled graph wants static shapes. Each training batch is padded to one of a few lengths
(`length_buckets`: a quarter, half, three quarters and all of the max length, each a multiple of 8) and
every position is computed, the padding's too, with the padded keys masked in attention
(harness.encoders.packed's `padded` form; the eager step runs padding-free instead). So a stage compiles
at most four graphs per batch size (the last batch of an epoch may be smaller), and on CUDA
`mode="reduce-overhead"` replays each as a CUDA graph: the forward's and backward's hundreds of kernels
in one launch each, where an eager step of a MiniLM-sized model is mostly the host launching them.
Evaluation (length-sorted batches of every length, no gradient) stays eager and padding-free.

The same model computes the same function, but in other shapes and fused kernels: a compiled step's loss
and gradients differ from the eager step's in the last bits (float rounding, not a different dropout
mask: the masks come from the same `torch.rand` calls), which training turns into metrics within bf16
noise (tests/encoders/test_compiled.py; the same-metrics guard, README).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from harness.encoders.encoder import Encoder

AUTO = "auto"


def resolve_compile(choice: bool | str, device: torch.device) -> bool:
    """`compile: auto` is on for CUDA, off elsewhere; true / false as given."""
    return device.type == "cuda" if choice == AUTO else bool(choice)


def length_buckets(max_length: int) -> list[int]:
    """A quarter, half, three quarters and all of `max_length`, each rounded up to a multiple of 8 (and
    never past `max_length`): [8, 16, 24, 32] for 32, [32, 64, 96, 128] for 128."""
    return sorted({min(max_length, 8 * math.ceil(max_length * quarter / 32)) for quarter in (1, 2, 3, 4)})


def bucket(length: int, buckets: list[int]) -> int:
    """The first bucket that holds `length` tokens."""
    return next((b for b in buckets if b >= length), buckets[-1])


def compile_training(encoder: Encoder, device: torch.device) -> str:
    """Pad the encoder's training batches to length buckets and run its training forward compiled
    (CUDA graphs on a GPU); returns the mode, for the run's tags."""
    mode = "reduce-overhead" if device.type == "cuda" else "default"
    # PCGrad (combine: pcgrad) runs one backward per task through the same graph (retain_graph=True),
    # which a compiled backward that donates its saved buffers refuses; they save memory, not time
    torch._functorch.config.donated_buffer = False
    encoder.buckets = length_buckets(encoder.max_length)
    encoder.compiled = torch.compile(encoder.padded_forward, mode=mode, dynamic=False)
    return mode


def compile_choice(encoder: Encoder, choice: bool | str, device: torch.device) -> str:
    """Apply the run's `compile` choice to its encoder on `device`; the words for the run's `compile` tag.
    `auto` turning it on is said once per process (a default that changes how a run computes)."""
    if not resolve_compile(choice, device):
        return f"off ({'auto: ' + device.type if choice == AUTO else 'compile: false'})"
    mode = compile_training(encoder, device)
    if choice == AUTO:
        from harness.notices import notice_once

        notice_once(f"note: compile: auto on {device.type}: training steps run compiled (torch.compile, "
                    f"mode {mode}, batches padded to {encoder.buckets} tokens); compile: false runs them "
                    "eager")  # fmt: skip
    return f"on ({'auto: ' + device.type if choice == AUTO else 'compile: true'}), {mode}"
