"""Model FLOPs of a BERT encoder's training step, and the GPU peaks model-FLOPs utilisation is taken against.

Per token and layer the forward pass of a BERT encoder (hidden d, intermediate f, a sequence of L tokens)
multiplies 2 * (4 d^2 + 2 d f) in its matrices (Q, K, V and the output projection; the two feed-forward
matrices) and 4 L d in attention (the scores Q K^T and their weighted sum of V over L keys); backward costs
twice the forward (Kaplan et al. 2020, sec. 2.1; Chowdhery et al. 2022, app. B), so a training step costs
3 x its forward. Embedding look-ups, layer norms, softmax and the pooled loss are left out, as MFU counts
them (Chowdhery et al. 2022, app. B). MFU = these FLOPs per second / the device's dense bf16 peak (the bf16
peak also where a run computes in fp32: one yardstick for every run).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Dense (no 2:4 sparsity) bf16 tensor-core peaks, TFLOPS, from NVIDIA's data sheets; looked up by a name
# fragment of `torch.cuda.get_device_name()`, the first that matches (so "H100 PCIe" before "H100", "L40"
# before "L4").
BF16_PEAK_TFLOPS: dict[str, float] = {
    "H100 PCIe": 756.0,
    "H100 NVL": 835.0,
    "H100": 989.4,  # SXM5 (the name reads "NVIDIA H100 80GB HBM3")
    "H200 NVL": 835.0,
    "H200": 989.4,  # SXM
    "A100": 312.0,
    "L40S": 362.1,
    "L40": 181.0,
    "L4": 121.0,
}


def forward_flops(config: Any, lengths: Sequence[int]) -> float:
    """FLOPs of one forward pass over sequences of the given token counts (padding-free: each sequence
    attends over its own length), from a BERT-like config (hidden_size, intermediate_size, layers)."""
    d, f, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    per_token = 2 * (4 * d * d + 2 * d * f)
    return float(layers * sum(n * per_token + 4 * n * n * d for n in lengths))


def train_step_flops(config: Any, lengths: Sequence[int]) -> float:
    """Forward + backward (twice the forward) over the sequences of one optimizer step."""
    return 3 * forward_flops(config, lengths)


def bf16_peak_tflops(device_name: str) -> float | None:
    """The dense bf16 peak of a GPU by name; None where it is not in the table (give it by hand)."""
    return next((peak for part, peak in BF16_PEAK_TFLOPS.items() if part in device_name), None)
