"""Encode many sentences fast: each distinct sentence once, in length-sorted batches, under autocast."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from tqdm.auto import tqdm

from harness.device import autocast
from harness.model.encoder import Encoder


@torch.inference_mode()
def encode(
    encoder: Encoder,
    sentences: Sequence[str],
    batch_size: int = 128,
    amp_dtype: torch.dtype | None = None,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Map each distinct sentence to its fp32 embedding.

    Sorting by length keeps padding (wasted compute) small; the model's train/eval mode is restored.
    """
    unique = sorted(set(sentences), key=len, reverse=True)
    was_training = encoder.training
    encoder.eval()
    out: dict[str, np.ndarray] = {}
    device = encoder.device
    try:
        for start in tqdm(
            range(0, len(unique), batch_size), desc="encode", unit="batch", disable=not progress, leave=False
        ):
            batch = unique[start : start + batch_size]
            with autocast(device, amp_dtype):
                emb = encoder.embed(batch)
            for sentence, vector in zip(batch, emb.float().cpu().numpy(), strict=True):
                out[sentence] = vector
    finally:
        encoder.train(was_training)
    return out
