"""Token ids made once per process and padded without the tokenizer's Python loop.

Evaluation tokenizes the same sentences again and again: every trial of a study scores the same STS
suite (26,289 distinct sentences), every dev pass the same STS-B dev set. `TokenIdCache` keeps the last
few sentence lists' ids per tokenizer (its files, class, truncation and max length), so a study
tokenizes its evaluation sets once, not once per trial and pass. `pad` builds the padded tensors in
numpy, equal to `tokenizer.pad(..., padding=True, return_tensors="pt")` (tests/encoders/test_tokens.py) at
a fraction of its cost.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import torch

TokenIds = dict[str, list[list[int]]]


class TokenIdCache:
    """The ids of the last `keep` sentence lists, per tokenizer identity and max length."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._entries: OrderedDict[tuple, TokenIds] = OrderedDict()

    def get(self, identity: tuple, sentences: Sequence[str], make: Callable[[], TokenIds]) -> TokenIds:
        """The cached ids of `sentences` (callers must not change them), else `make()`'s, kept."""
        key = (identity, tuple(sentences))
        if key in self._entries:
            self._entries.move_to_end(key)
            return self._entries[key]
        ids = make()
        self._entries[key] = ids
        while len(self._entries) > self.keep:
            self._entries.popitem(last=False)
        return ids


TOKEN_IDS = TokenIdCache()


def pad_values(tokenizer: Any) -> dict[str, int]:
    """What each tokenizer output is padded with (as `PreTrainedTokenizerBase.pad` pads)."""
    return {
        "input_ids": int(tokenizer.pad_token_id),
        "attention_mask": 0,
        "token_type_ids": int(getattr(tokenizer, "pad_token_type_id", 0)),
        "special_tokens_mask": 1,
    }


def pad(features: TokenIds, values: dict[str, int], side: str = "right") -> dict[str, torch.Tensor]:
    """Each list of rows padded to the longest row, as int64 tensors ([rows, longest])."""
    lengths = np.array([len(row) for row in features["input_ids"]])
    width = int(lengths.max()) if len(lengths) else 0
    columns = np.arange(width)
    filled = columns[None, :] < lengths[:, None]
    if side == "left":
        filled = filled[:, ::-1]
    out = {}
    for key, rows in features.items():
        array = np.full((len(rows), width), values.get(key, 0), dtype=np.int64)
        if rows:
            array[filled] = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum()))
        out[key] = torch.from_numpy(array)
    return out


def widened(
    batch: dict[str, torch.Tensor], width: int, values: dict[str, int], side: str = "right"
) -> dict[str, torch.Tensor]:
    """Padded [rows, length] tensors padded further, to `width` columns, with the tokenizer's pad values
    on its padding side."""
    out = {}
    for key, tensor in batch.items():
        extra = torch.full((tensor.shape[0], width - tensor.shape[1]), values.get(key, 0), dtype=tensor.dtype)
        out[key] = torch.cat([extra, tensor] if side == "left" else [tensor, extra], 1)
    return out
