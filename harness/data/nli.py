"""NLI data as groups: a premise with its entailment / neutral / contradiction hypotheses.

Liao's SCL treats each premise as an anchor, its entailed hypotheses as positives and its neutral /
contradiction hypotheses (plus every other premise's hypotheses in the batch) as negatives. Two batch
orders (`nli_batches`):
- `file_order` (`file_order_batches`, Liao's default): the pairs in the data's order, cut every
  `batch_size` rows, never shuffled, as the authors' loader does (Danqi7/584-final@0e40add utils.py:59-60
  "Don't shuffle since we want same premise cluster together", :75-76 a DataLoader of `batch_size` rows
  without `shuffle`): a premise's group stays together except where a cut falls inside it, and then
  each batch holds its part of the group.
- `premise_groups` (`pack_batches`): whole groups, shuffled each epoch, packed into batches of at most
  `batch_size` pairs, so no group is ever cut (and batches vary in size).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.data.hub import load_hub_dataset
from harness.data.paths import require_file
from harness.errors import HarnessError

LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}
ENTAILMENT = LABELS["entailment"]


@dataclass(frozen=True)
class NLIGroup:
    """One premise and its labelled hypotheses (labels index LABELS)."""

    premise: str
    hypotheses: tuple[str, ...]
    labels: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.hypotheses)


def group_pairs(triples: Iterable[tuple[str, str, int]]) -> list[NLIGroup]:
    """Group (premise, hypothesis, label) triples by premise, keeping first-seen order."""
    grouped: dict[str, tuple[list[str], list[int]]] = {}
    for premise, hypothesis, label in triples:
        hyps, labels = grouped.setdefault(premise, ([], []))
        hyps.append(hypothesis)
        labels.append(label)
    return [NLIGroup(p, tuple(h), tuple(lab)) for p, (h, lab) in grouped.items()]


def read_snli_local(root: Path, splits: Sequence[str] = ("dev", "test")) -> list[NLIGroup]:
    """SNLI from SentEval's `SNLI/{s1,s2,labels}.<split>` files (one item per line)."""
    triples: list[tuple[str, str, int]] = []
    for split in splits:
        base = root / "senteval" / "SNLI"
        s1, s2, lab = (require_file(base / f"{n}.{split}") for n in ("s1", "s2", "labels"))
        premises = s1.read_text(encoding="utf-8").splitlines()
        hypotheses = s2.read_text(encoding="utf-8").splitlines()
        labels = lab.read_text(encoding="utf-8").splitlines()
        if not len(premises) == len(hypotheses) == len(labels):
            raise HarnessError(
                f"{base}: s1/s2/labels.{split} have {len(premises)}/{len(hypotheses)}/{len(labels)} lines"
            )
        for line_no, (p, h, label) in enumerate(zip(premises, hypotheses, labels, strict=True), start=1):
            if label.strip() not in LABELS:
                raise HarnessError(
                    f"{lab}:{line_no}: unknown label {label!r}; expected one of {list(LABELS)}"
                )
            triples.append((p.strip(), h.strip(), LABELS[label.strip()]))
    return group_pairs(triples)


def read_snli_hub(split: str = "train", dataset: str = "stanfordnlp/snli") -> list[NLIGroup]:
    """Full SNLI from the Hugging Face hub (needs internet); pairs without a gold label are dropped."""
    try:
        rows = load_hub_dataset(dataset, split=split)
    except Exception as exc:
        raise HarnessError(
            f"cannot load {dataset} ({split}) from the hub: {type(exc).__name__}; "
            "use a profile with train_data: snli_local when offline"
        ) from exc
    return group_pairs((r["premise"], r["hypothesis"], r["label"]) for r in rows if r["label"] in (0, 1, 2))


def pack_batches(groups: Sequence[NLIGroup], batch_pairs: int, rng: random.Random) -> list[list[NLIGroup]]:
    """Shuffle groups and pack whole groups into batches of at most `batch_pairs` pairs.

    A group larger than `batch_pairs` gets a batch of its own.
    """
    order = list(range(len(groups)))
    rng.shuffle(order)
    batches: list[list[NLIGroup]] = []
    current: list[NLIGroup] = []
    size = 0
    for index in order:
        group = groups[index]
        if current and size + len(group) > batch_pairs:
            batches.append(current)
            current, size = [], 0
        current.append(group)
        size += len(group)
    if current:
        batches.append(current)
    return batches


def file_order_batches(groups: Sequence[NLIGroup], batch_pairs: int) -> list[list[NLIGroup]]:
    """The pairs in the groups' order, `batch_pairs` rows a batch (the last may be short), each batch's
    rows regrouped by premise: a group a cut falls inside is split between two batches (module
    docstring)."""
    rows = [(g.premise, h, label) for g in groups for h, label in zip(g.hypotheses, g.labels, strict=True)]
    batches = []
    for start in range(0, len(rows), batch_pairs):
        batch: list[NLIGroup] = []
        for premise, hypothesis, label in rows[start : start + batch_pairs]:
            if batch and batch[-1].premise == premise:
                last = batch[-1]
                batch[-1] = NLIGroup(premise, (*last.hypotheses, hypothesis), (*last.labels, label))
            else:
                batch.append(NLIGroup(premise, (hypothesis,), (label,)))
        batches.append(batch)
    return batches
