"""Average GloVe word vectors as a sentence embedding (Liao Table 2-3 "Avg. GloVe embeddings").

    e(s) = 1/|W(s)| * sum_{w in W(s)} g(w),   W(s) = the tokens of s that have a GloVe vector g(w)

and the zero vector when no token has one: SentEval's bag-of-words example
(facebookresearch/SentEval@5d6dc11 examples/bow.py:80-89: words without a vector are skipped, `np.zeros`
when none is left; :77 an empty sentence is read as "."). The vectors file is GloVe's text format
(`word v1 ... vd` a line; `.gz` read as gzip). Only the words of the sentences asked for are kept: each
call reads the file once for the words it has not looked up yet (bow.py:54-62 `get_wordvec` reads only
the words of the evaluated sentences too). Where a word has several lines of the right width, the first
wins; lines of another width (glove.840B has a few whose word holds spaces) are skipped.

Tokens: SentEval reads pre-tokenized text and splits on whitespace (senteval/sts.py:42-43); its STS
files were Moses-tokenized. `tokenize` separates punctuation the same way before splitting, so it is
close to the identity on that text (`text_variant: senteval`) and tokenizes raw text (`raw`) alike:
a token is a word or number with inner `-`, `.` or `,` kept ("state-of-the-art", "0.11", "1,650"), a
clitic from its apostrophe on ("'s", "'t": Moses' "don 't"), or any other single character. Case is
kept: glove.840B is cased (the `senteval` STS text is lowercase already).

`GloveEmbedder` has the sentence-encoder interface of `harness.encoders.encoder.Encoder` that the
evaluation uses (`token_ids`, `collate`, `forward`, `embed`, `pooling`, `max_length`, `device`), so the
STS and SentEval transfer tasks score it like any model. It holds no parameters: its embedding-cache key
is its `pooling` string, which names the file by name, size and modification time.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from harness.errors import HarnessError

TOKEN = re.compile(r"'\w+|\w+(?:[-.,]\w+)*|[^\w\s]")


def tokenize(sentence: str) -> list[str]:
    """Words, numbers, clitics and single punctuation marks, case kept (see the module docstring)."""
    return TOKEN.findall(sentence)


@contextmanager
def _lines(path: Path) -> Iterator[BinaryIO]:
    with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
        yield handle  # type: ignore[misc]


def vector_width(path: Path) -> int:
    """d, from the first line `word v1 ... vd`."""
    with _lines(path) as handle:
        fields = handle.readline().split()
    if len(fields) < 2:
        raise HarnessError(f"{path}: the first line is not `word v1 ... vd`; give a GloVe text file")
    return len(fields) - 1


def read_vectors(path: Path, words: Iterable[str], width: int) -> dict[str, np.ndarray]:
    """The vectors of those `words` the file has (float32); one pass, stopping once all are found."""
    wanted = {word.encode("utf-8"): word for word in words}
    found: dict[str, np.ndarray] = {}
    with _lines(path) as handle:
        for line in handle:
            space = line.find(b" ")
            word = wanted.get(line[:space])
            if word is None or word in found:
                continue
            values = line[space + 1 :].split()
            if len(values) == width:
                found[word] = np.array(values, dtype=np.float32)
                if len(found) == len(wanted):
                    break
    return found


class GloveEmbedder(nn.Module):
    """Sentences -> mean GloVe vector, with `Encoder`'s evaluation interface (module docstring)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.width = vector_width(path)
        stat = path.stat()
        self.pooling = f"glove_mean({path.name}, {stat.st_size} bytes, mtime {stat.st_mtime_ns})"
        self.max_length: int | None = None
        self.eval_length: int | None = None
        self.rows: dict[str, int] = {}  # word -> row of `table`
        self.searched: set[str] = set()  # every word looked up in the file, found or not
        self.table = torch.zeros(0, self.width)  # not a buffer: the cache key must not depend on it

    @property
    def device(self) -> torch.device:
        return self.table.device

    def _load(self, words: set[str]) -> None:
        missing = words - self.searched
        if not missing:
            return
        found = read_vectors(self.path, sorted(missing), self.width)
        self.searched |= missing
        if found:
            for word in found:
                self.rows[word] = len(self.rows)
            self.table = torch.cat([self.table, torch.from_numpy(np.stack(list(found.values())))])

    def token_ids(self, sentences: Sequence[str]) -> dict[str, list[list[int]]]:
        """Rows of the words that have a vector, per sentence (the file is read for new words)."""
        tokens = [tokenize(s) or ["."] for s in sentences]
        self._load({t for sentence in tokens for t in sentence})
        return {"input_ids": [[self.rows[t] for t in sentence if t in self.rows] for sentence in tokens]}

    def collate(self, features: dict[str, list[list[int]]]) -> dict[str, torch.Tensor]:
        """The rows as one flat tensor plus each sentence's offset (`F.embedding_bag`'s input)."""
        ids = features["input_ids"]
        offsets = np.cumsum([0] + [len(row) for row in ids[:-1]])
        flat = [i for row in ids for i in row]
        return {
            "ids": torch.tensor(flat, dtype=torch.long, device=self.device),
            "offsets": torch.as_tensor(offsets, dtype=torch.long, device=self.device),
        }

    def forward(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean of each sentence's rows in fp32; an empty sentence (no known word) gives zeros."""
        with torch.autocast(self.device.type, enabled=False):
            return F.embedding_bag(inputs["ids"], self.table, inputs["offsets"], mode="mean")

    def embed(self, sentences: Sequence[str]) -> torch.Tensor:
        """Embeddings [len(sentences), d] of one batch."""
        return self(self.collate(self.token_ids(sentences)))
