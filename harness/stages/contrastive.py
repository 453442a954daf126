"""`contrastive` stages (SimCSE, Gao et al. 2021; Chen 3.2; David et al. 3.2; Phillips):

- `unsup`: each sentence against a second dropout pass of itself (both passes in one forward call:
  dropout masks differ per row), in-batch negatives; sentences from `data` (wiki / sst / quora / sts).
- `sup_quora`: Quora paraphrase pairs as positives; with `quora_negatives` the non-paraphrase pairs are
  pushed apart (Chen's paired loss), else only paraphrase pairs are used.
- `sup_nli`: SNLI (premise, entailment, contradiction) triplets, contradictions as hard negatives.

The method's projection (harness.model.projection: SimCSE's or Chen's MLP; evaluated only with
`mlp_at_test`) sits on the embedding when it has one.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import Field, model_validator

from harness.data.cs224n import MultitaskData, run_multitask_data
from harness.data.nli import ENTAILMENT, LABELS
from harness.data.paths import require_file
from harness.data.train_sets import load_nli
from harness.fields import Sources, refuse_set
from harness.losses import info_nce, paired_info_nce
from harness.stages.registry import StageSpec, register_stage
from harness.train.batching import length_grouped, random_batches
from harness.train.loop import Stage

CONTRADICTION = LABELS["contradiction"]
Kind = Literal["unsup", "sup_quora", "sup_nli"]
# the fields each kind does not read (refused when set)
IGNORED = {
    "unsup": {"quora_negatives", "hard_negative_weight"},
    "sup_quora": {"data", "hard_negative_weight"},
    "sup_nli": {"data", "quora_negatives"},
}


@functools.lru_cache(maxsize=2)
def wiki_sentences(data_dir: Path) -> tuple[str, ...]:
    """The unsupervised SimCSE corpus (its first 11,914 sentences offline)."""
    path = require_file(data_dir / "wiki" / "wiki1m_head.txt")
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def nli_triplets(settings: Any, data_dir: Path) -> list[tuple[str, str, str]]:
    """(premise, entailment, contradiction) for every premise that has both."""
    triplets = []
    for group in load_nli(settings, data_dir):
        entailed = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == ENTAILMENT]
        contradicted = [h for h, y in zip(group.hypotheses, group.labels, strict=True) if y == CONTRADICTION]
        triplets += [(group.premise, e, c) for e, c in zip(entailed, contradicted, strict=False)]
    return triplets


def unsup_sentences(sources: list[str], data_dir: Path, tasks: MultitaskData) -> list[str]:
    """The distinct sentences of the chosen sources, sorted (an order independent of the hash seed)."""
    pool = {
        "wiki": lambda: wiki_sentences(data_dir),
        "sst": lambda: tasks.sst_train.texts,
        "quora": lambda: tasks.quora_train.first + tasks.quora_train.second,
        "sts": lambda: tasks.sts_train.first + tasks.sts_train.second,
    }
    return sorted({s for source in sources for s in pool[source]()})


def project(method: Any, sentences: list[str]) -> torch.Tensor:
    z = method.encoder.embed(sentences)
    return method.projection(z) if method.projection is not None else z


def unsup_loss(method: Any, sentences: list[str], temperature: float) -> dict[str, torch.Tensor]:
    """SimCSE's unsupervised InfoNCE: row i of the first pass against row i of the second."""
    z = project(method, list(sentences) * 2)
    n = len(sentences)
    return {"loss": info_nce(z[:n], z[n:], temperature=temperature)}


@register_stage("contrastive")
class ContrastiveStage(StageSpec):
    """A contrastive stage of kind `contrastive` (unsup, sup_quora, sup_nli)."""

    needs_projection = True

    contrastive: Kind
    data: Sources = Field(default_factory=lambda: ["wiki"], description="unsup: the sentence sources")
    limit: int | None = Field(None, gt=0, description="use only the first N examples")
    fraction: float | None = Field(
        None,
        gt=0,
        le=1,
        description="each epoch, a fresh random share of the examples (Chen 5.3: 6% of Quora)",
    )
    temperature: float = Field(0.05, gt=0)
    quora_negatives: bool = Field(True, description="sup_quora: non-paraphrases pushed apart (Chen)")
    hard_negative_weight: float = Field(0.0, description="sup_nli: SimCSE's log weight on own hard negative")
    length_grouping: bool = Field(
        False,
        description="batch examples of similar length together (less padding, but in-batch negatives of "
        "similar length); off = random batches, as SimCSE's Trainer (princeton-nlp/SimCSE@3ebee8f "
        "run_unsup_example.sh sets no group_by_length)",
    )

    @model_validator(mode="after")
    def _fields_of_the_kind(self) -> ContrastiveStage:
        refuse_set(self, self.unread(), f"by a '{self.contrastive}' contrastive stage")
        return self

    def unread(self) -> set[str]:
        return IGNORED[self.contrastive]

    def reads_quora(self) -> bool:
        return self.contrastive == "sup_quora" or (self.contrastive == "unsup" and "quora" in self.data)

    @classmethod
    def from_params(cls, kind: str, params: Any, **schedule: Any) -> ContrastiveStage:
        """The stage a preset's flat fields describe (`contrastive_data`, `contrastive_limit`, ...)."""
        fields = {
            "data": getattr(params, "contrastive_data", None),
            "quora_negatives": getattr(params, "quora_negatives", None),
            "hard_negative_weight": getattr(params, "hard_negative_weight", None),
        }
        own = {k: v for k, v in fields.items() if k not in IGNORED[kind] and v is not None}
        return cls(contrastive=kind, limit=params.contrastive_limit, temperature=params.temperature,
                   length_grouping=params.length_grouping, **own, **schedule)  # fmt: skip

    def load(self, run: Any, sources: Any) -> list[Any]:
        """Sentences (unsup), (s1, s2, label) (sup_quora) or (premise, entailment, contradiction)."""
        if self.contrastive == "sup_nli":
            examples: list[Any] = nli_triplets(run.settings, sources.data_dir)
        else:
            tasks = run_multitask_data(run, sources.data_dir)
            if self.contrastive == "sup_quora":
                q = tasks.quora_train
                examples = [(a, b, int(y)) for a, b, y in zip(q.first, q.second, q.targets, strict=True)
                            if self.quora_negatives or y == 1]  # fmt: skip
            else:
                examples = unsup_sentences(self.data, sources.data_dir, tasks)
        return examples[: self.limit] if self.limit else examples

    def loss(self, method: Any, batch: list[Any]) -> dict[str, torch.Tensor]:
        if self.contrastive == "unsup":
            return unsup_loss(method, batch, self.temperature)
        n, tau = len(batch), self.temperature
        if self.contrastive == "sup_quora":
            z = project(method, [b[0] for b in batch] + [b[1] for b in batch])
            if self.quora_negatives:
                labels = torch.tensor([b[2] for b in batch], device=z.device)
                return {"loss": paired_info_nce(z[:n], z[n:], labels, tau)}
            return {"loss": info_nce(z[:n], z[n:], temperature=tau)}
        z = project(method, [b[0] for b in batch] + [b[1] for b in batch] + [b[2] for b in batch])
        return {"loss": info_nce(z[:n], z[n : 2 * n], z[2 * n :], tau, self.hard_negative_weight)}

    def build(self, method: Any, settings: Any, data: list[Any]) -> Stage:
        epochs, lr, batch_size, max_steps = self.schedule(settings)

        def size(example: Any) -> int:
            return len(example) if isinstance(example, str) else sum(len(x) for x in example[:3]
                                                                      if isinstance(x, str))  # fmt: skip

        def batches(rng: random.Random) -> list[list[Any]]:
            chosen = (
                data if self.fraction is None else rng.sample(data, max(2, round(self.fraction * len(data))))
            )
            if self.length_grouping:
                grouped = length_grouped(chosen, batch_size, rng, size)
            else:
                grouped = random_batches(chosen, batch_size, rng)
            return [b for b in grouped if len(b) > 1]

        return Stage(f"contrastive-{self.contrastive}", batches, [lambda b: self.loss(method, b)], epochs,
                     lr, max_steps)  # fmt: skip
