"""Contrastive stages shared by several methods (SimCSE, Gao et al. 2021; Chen 3.2; Phillips):

- `unsup`: each sentence against a second dropout pass of itself (both passes in one forward call:
  dropout masks differ per row), in-batch negatives; sentences from wiki / SST / Quora / STS.
- `sup_quora`: Quora paraphrase pairs as positives; with `quora_negatives` the non-paraphrase pairs are
  pushed apart (Chen's paired loss), else only paraphrase pairs are used.
- `sup_nli`: SNLI (premise, entailment, contradiction) triplets, contradictions as hard negatives.

An MLP projection (Linear + Tanh, SimCSE's) sits on the embedding during contrastive training only.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any

import torch
from torch import nn

from harness.data.cs224n import MultitaskData, read_multitask
from harness.data.nli import ENTAILMENT, LABELS
from harness.data.paths import require_file
from harness.data.train_sets import load_nli
from harness.losses import info_nce, paired_info_nce
from harness.methods.base import Method
from harness.methods.params import SimCSEParams
from harness.model.encoder import Encoder
from harness.train.batching import length_grouped, random_batches
from harness.train.loop import Stage

CONTRADICTION = LABELS["contradiction"]


@functools.lru_cache(maxsize=2)
def wiki_sentences(data_dir: Path) -> tuple[str, ...]:
    """The unsupervised SimCSE corpus (its first 11,914 sentences offline)."""
    path = require_file(data_dir / "wiki" / "wiki1m_head.txt")
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def nli_triplets(config: Any, data_dir: Path) -> list[tuple[str, str, str]]:
    """(premise, entailment, contradiction) for every premise that has both."""
    triplets = []
    for group in load_nli(config, data_dir):
        entailed = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == ENTAILMENT]
        contradicted = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == CONTRADICTION]
        triplets += [(group.premise, e, c) for e, c in zip(entailed, contradicted, strict=False)]
    return triplets


def contrastive_examples(
    kind: str, params: Any, config: Any, data_dir: Path, tasks: MultitaskData | None = None
) -> list[Any]:
    """The stage's training examples: sentences (unsup), (s1, s2, label) (sup_quora) or triplets (sup_nli)."""
    if kind == "sup_nli":
        examples: list[Any] = nli_triplets(config, data_dir)
    else:
        tasks = tasks or read_multitask(data_dir)
        if kind == "sup_quora":
            q = tasks.quora_train
            examples = [(a, b, int(y)) for a, b, y in zip(q.first, q.second, q.targets, strict=True)
                        if params.quora_negatives or y == 1]  # fmt: skip
        else:
            pool = {
                "wiki": lambda: wiki_sentences(data_dir),
                "sst": lambda: tasks.sst_train.texts,
                "quora": lambda: tasks.quora_train.first + tasks.quora_train.second,
                "sts": lambda: tasks.sts_train.first + tasks.sts_train.second,
            }
            examples = sorted({s for source in params.contrastive_data for s in pool[source]()})
    return examples[: params.contrastive_limit] if params.contrastive_limit else examples


class ContrastiveMixin:
    """Gives a Method SimCSE's projection and contrastive losses; call `init_contrastive` in __init__."""

    encoder: Any

    def init_contrastive(self, params: SimCSEParams) -> None:
        hidden = self.encoder.hidden_size
        self.projection = (
            nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh()) if params.mlp_projection else None
        )
        self.contrastive_params = params

    def project(self, sentences: list[str]) -> torch.Tensor:
        z = self.encoder.embed(sentences)
        return self.projection(z) if self.projection is not None else z

    def unsup_loss(self, sentences: list[str]) -> dict[str, torch.Tensor]:
        z = self.project(list(sentences) * 2)
        n = len(sentences)
        return {"loss": info_nce(z[:n], z[n:], temperature=self.contrastive_params.temperature)}

    def contrastive_loss(self, kind: str, batch: list[Any]) -> dict[str, torch.Tensor]:
        p = self.contrastive_params
        if kind == "unsup":
            return self.unsup_loss(batch)
        n = len(batch)
        if kind == "sup_quora":
            z = self.project([b[0] for b in batch] + [b[1] for b in batch])
            if p.quora_negatives:
                labels = torch.tensor([b[2] for b in batch], device=z.device)
                return {"loss": paired_info_nce(z[:n], z[n:], labels, p.temperature)}
            return {"loss": info_nce(z[:n], z[n:], temperature=p.temperature)}
        z = self.project([b[0] for b in batch] + [b[1] for b in batch] + [b[2] for b in batch])
        return {"loss": info_nce(z[:n], z[n : 2 * n], z[2 * n :], p.temperature, p.hard_negative_weight)}

    def contrastive_stage(
        self, kind: str, examples: list[Any], epochs: int, lr: float, batch_size: int, max_steps: int | None
    ) -> Stage:
        def batches(rng: random.Random) -> list[list[Any]]:
            if self.contrastive_params.length_grouping:
                size = (
                    (lambda e: len(e))
                    if kind == "unsup"
                    else (lambda e: sum(len(x) for x in e[:3] if isinstance(x, str)))
                )
                grouped = length_grouped(examples, batch_size, rng, size)
            else:
                grouped = random_batches(examples, batch_size, rng)
            return [b for b in grouped if len(b) > 1]

        return Stage(f"contrastive-{kind}", batches, [lambda b: self.contrastive_loss(kind, b)], epochs, lr,
                     max_steps)  # fmt: skip


class ContrastiveMethod(ContrastiveMixin, Method):
    """A method made only of contrastive stages (scored on STS); `Params` derives SimCSEParams."""

    def __init__(self, encoder: Encoder, params: SimCSEParams) -> None:
        Method.__init__(self, encoder, params)
        self.init_contrastive(params)
