"""harness.flops: the analytic FLOPs of a BERT training step equal PyTorch's own count of the matrix
products (torch.utils.flop_counter), forward and forward + backward; GPU peaks by device name."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import BertConfig, BertModel

from harness.flops import bf16_peak_tflops, forward_flops, train_step_flops


def test_flops_equal_pytorchs_count_of_a_bert_step() -> None:
    config = BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=64)  # fmt: skip
    model = BertModel(config, add_pooling_layer=False)
    ids = torch.randint(0, 100, (3, 40))
    with FlopCounterMode(display=False) as counter:
        hidden = model(input_ids=ids).last_hidden_state
        forward = counter.get_total_flops()
        hidden.sum().backward()
    assert forward == forward_flops(config, [40, 40, 40])
    assert counter.get_total_flops() == train_step_flops(config, [40, 40, 40])


def test_bert_base_over_64_sequences_of_128_tokens() -> None:
    """Worked by hand (one SimCSE view of a batch of 64): 12 layers x 8,192 tokens x
    (2 (4 * 768^2 + 2 * 768 * 3072) + 4 * 128 * 768)."""
    config = BertConfig()  # bert-base: hidden 768, intermediate 3072, 12 layers
    assert (
        train_step_flops(config, [128] * 64) == 3 * 12 * 8192 * 14_548_992 == pytest.approx(4.2907e12, 1e-4)
    )


@pytest.mark.parametrize(
    ("name", "peak"),
    [("NVIDIA H100 80GB HBM3", 989.4), ("NVIDIA H100 PCIe", 756.0), ("NVIDIA H200", 989.4),
     ("NVIDIA A100-SXM4-80GB", 312.0), ("NVIDIA L40S", 362.1), ("NVIDIA L40", 181.0), ("NVIDIA L4", 121.0),
     ("NVIDIA H200 NVL", 835.0), ("Tesla T4", None)],
)  # fmt: skip
def test_peaks_by_device_name(name: str, peak: float | None) -> None:
    assert bf16_peak_tflops(name) == peak
