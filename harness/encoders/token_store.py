"""A stage's sentences tokenized once, ahead of its loop (issue 54 item 2): the loop hands a stage's planned
batches to `Encoder.remember`, which tokenizes their distinct sentences in large batches (the fast
tokenizer's parallel batch API) into one flat int32 array; each step then builds its padded tensors from
those ids in numpy instead of calling the tokenizer. A step of MiniLM on a GPU is a few milliseconds of
kernels, and the tokenizer's call per batch was host time the GPU waited through.

The tensors are the tokenizer's own (`tokenizer(sentences, padding=True, truncation=True, max_length=...)`,
each distinct sentence tokenized alone: BERT-like tokenizers have no cross-sentence state), padded with
its pad values on its padding side (harness.encoders.tokens.pad), so a run's metrics do not change
(tests/encoders/test_token_store.py). `widen` pads further, to a length bucket (compiled steps).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
import torch

from harness.encoders.tokens import pad_values

CHUNK = 8192  # sentences per tokenizer call while remembering


class TokenStore:
    """The token ids of remembered sentences: ids of row r are `ids[starts[r]:starts[r + 1]]`, per output
    of the tokenizer (input_ids, and token_type_ids where it gives them; attention_mask is all ones on
    real tokens and built when padding)."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.tokenizer, self.max_length = tokenizer, max_length
        self.rows: dict[str, int] = {}
        self.ids: dict[str, np.ndarray] = {}
        self.starts = np.zeros(1, dtype=np.int64)
        self.values = pad_values(tokenizer)

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, sentences: Iterable[str]) -> None:
        """Tokenize the sentences not remembered yet (each once)."""
        new = [s for s in dict.fromkeys(sentences) if s not in self.rows]
        parts: dict[str, list[np.ndarray]] = {key: [ids] for key, ids in self.ids.items()}
        starts = [self.starts]
        for start in range(0, len(new), CHUNK):
            chunk = new[start : start + CHUNK]
            encoded = self.tokenizer(chunk, truncation=True, max_length=self.max_length)
            lengths = np.fromiter(map(len, encoded["input_ids"]), dtype=np.int64, count=len(chunk))
            for key, rows in encoded.items():
                if key != "attention_mask":
                    flat = np.fromiter(chain.from_iterable(rows), dtype=np.int32, count=int(lengths.sum()))
                    parts.setdefault(key, []).append(flat)
            starts.append(starts[-1][-1] + np.cumsum(lengths))
            self.rows.update({s: len(self.rows) + i for i, s in enumerate(chunk)})
        self.ids = {key: np.concatenate(arrays) for key, arrays in parts.items()}
        self.starts = np.concatenate(starts)

    def knows(self, sentences: Sequence[str]) -> bool:
        return all(s in self.rows for s in sentences)

    def batch(
        self, sentences: Sequence[str], widen: Callable[[int], int] | int = 0
    ) -> dict[str, torch.Tensor]:
        """The padded int64 tensors of `sentences` (all remembered), as the tokenizer pads them, to the
        longest sentence, or to `widen(longest)` (a length bucket), or to `widen` if that is longer."""
        rows = np.fromiter((self.rows[s] for s in sentences), dtype=np.int64, count=len(sentences))
        begin, end = self.starts[rows], self.starts[rows + 1]
        lengths = end - begin
        longest = int(lengths.max()) if len(rows) else 0
        width = widen(longest) if callable(widen) else max(longest, widen)
        columns = np.arange(width)
        real = columns[None, :] < lengths[:, None]
        if self.tokenizer.padding_side == "left":
            real = real[:, ::-1]
        take = (begin[:, None] + np.arange(width)[None, :])[columns[None, :] < lengths[:, None]]
        out: dict[str, torch.Tensor] = {}
        for key in ("input_ids", "token_type_ids"):
            if key in self.ids:
                array = np.full((len(rows), width), self.values.get(key, 0), dtype=np.int64)
                array[real] = self.ids[key][take]
                out[key] = torch.from_numpy(array)
        out["attention_mask"] = torch.from_numpy(real.astype(np.int64))
        return out


def strings(batches: Iterable[Any]) -> Iterable[str]:
    """Every string in `batches` (lists of sentences, of pairs or triples of sentences, ...); anything
    else (ids into a data set) is skipped: its stage tokenizes at each step as before."""
    for item in batches:
        if isinstance(item, str):
            yield item
        elif isinstance(item, list | tuple):
            yield from strings(item)
