"""Supervised contrastive loss over several views (Khosla et al., 2020, eq. 2; SupCL-Seq's objective)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def supcon(
    features: torch.Tensor,
    labels: torch.Tensor,
    temperature: float = 0.1,
    normalize: bool = True,
    base_temperature: float | None = None,
) -> torch.Tensor:
    """L = mean over anchors i with |P(i)| > 0 of
        -1/|P(i)| sum_{p in P(i)} log( exp(z_i.z_p / tau) / sum_{a != i} exp(z_i.z_a / tau) )

    over all B * V views z, L2-normalised (SupCL-Seq footnote 2; `normalize: False` takes the raw inner
    product), where P(i) holds the other views with the same label (the other dropout views of the same
    sentence included). Sedghamiz et al. (SupCL-Seq) feed V dropout views of each sentence, e.g. dropout
    probabilities [0.0, 0.1, 0.2]. SupCL-Seq eq. 2 writes a sum over anchors; Khosla et al.'s code and
    SupCL-Seq's (hooman650/SupCL-Seq@320440f src/SupCsTrainer.py:212) average, as here. With
    `base_temperature` the loss is scaled by tau / base_temperature, as that code does (line 211, its
    SupConLoss default base_temperature=0.07, line 132); with AdamW a constant scale changes little
    beyond gradient clipping.

    Args: features [B, V, d]; labels [B].
    """
    batch, views, _ = features.shape
    z = features.float().reshape(batch * views, -1)
    z = F.normalize(z, dim=-1) if normalize else z
    view_labels = labels.repeat_interleave(views)
    logits = z @ z.T / temperature
    self_mask = torch.eye(batch * views, dtype=torch.bool, device=z.device)
    log_prob = logits - torch.logsumexp(logits.masked_fill(self_mask, float("-inf")), dim=1, keepdim=True)
    positive = (view_labels.unsqueeze(0) == view_labels.unsqueeze(1)) & ~self_mask
    n_pos = positive.sum(dim=1)
    per_anchor = -torch.where(positive, log_prob, torch.zeros_like(log_prob)).sum(dim=1) / n_pos.clamp(min=1)
    has_pos = (n_pos > 0).float()
    loss = (per_anchor * has_pos).sum() / has_pos.sum().clamp(min=1.0)
    return loss * (temperature / base_temperature) if base_temperature else loss
