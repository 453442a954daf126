"""Poolers that turn token states into one sentence embedding.

- `cls`: BERT's pooler output (dense + tanh over [CLS]) when the model has one, else the [CLS] state
  (SimCSE's `cls`).
- `cls_before_pooler`: the last layer's [CLS] state (how unsupervised SimCSE is evaluated).
- `mean`: mean of the last layer's token states over the attention mask (SBERT).
- `mean_no_cls`: the same mean without the first token, [CLS] (Liao 3: "pool the output token embeddings
  except the first [CLS] token"; [SEP] is an output token and stays). Liao's code
  (Danqi7/584-final@0e40add models.py:44, :65) also drops [CLS] but divides by the padded length (and
  at encoding time averages padding states too); the paper's mean over real tokens is what runs here.
- `model` (a run field's value, resolved by `Encoder`): the model's own sentence-transformers pipeline,
  one of the above then L2 normalisation where it has a Normalize module (harness.model.st_pipeline).
- `first_last_avg`: mean over the mask of (first layer + last layer) / 2, with the first layer being
  hidden_states[1], the first transformer layer's output (SimCSE's evaluation code).
"""

from __future__ import annotations

import torch

from harness.choices import POOLINGS, Pooling

__all__ = ["POOLINGS", "Pooling", "mean_pool", "pool"]


def mean_pool(states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """sum_t m_t h_t / sum_t m_t, computed in fp32."""
    mask = attention_mask.unsqueeze(-1).to(torch.float32)
    summed = (states.to(torch.float32) * mask).sum(dim=1)
    return summed / mask.sum(dim=1).clamp(min=1.0)


def pool(
    method: str,
    last_hidden_state: torch.Tensor,
    attention_mask: torch.Tensor,
    pooler_output: torch.Tensor | None = None,
    hidden_states: tuple[torch.Tensor, ...] | None = None,
) -> torch.Tensor:
    """Apply pooler `method` (one of POOLINGS) and return [batch, hidden] in fp32."""
    if method == "mean":
        return mean_pool(last_hidden_state, attention_mask)
    if method == "mean_no_cls":
        return mean_pool(last_hidden_state[:, 1:], attention_mask[:, 1:])
    if method == "first_last_avg":
        if hidden_states is None:
            raise ValueError("first_last_avg needs the model's hidden_states (output_hidden_states=True)")
        return mean_pool((hidden_states[1].float() + hidden_states[-1].float()) / 2.0, attention_mask)
    if method == "cls_before_pooler" or (method == "cls" and pooler_output is None):
        return last_hidden_state[:, 0].to(torch.float32)
    if method == "cls":
        return pooler_output.to(torch.float32)
    raise ValueError(f"unknown pooling {method!r}; choose one of {', '.join(POOLINGS)}")
