"""`contrastive` stages (SimCSE, Gao et al. 2021; Chen 4.1; David et al. 3.2; Phillips):

- `unsup`: each sentence against a second dropout pass of itself (both passes in one forward call:
  dropout masks differ per row), in-batch negatives; sentences from `data` (wiki / sst / quora / sts, or
  `glue:<TASK>`: the distinct sentences of a GLUE task's train split, both sentences of a pair, from the
  pipeline's `glue_source`; SupCL-Seq Table 3's "re-implementation of Gao et al. (2021)" on the task).
- `sup_quora`: Quora paraphrase pairs as positives; with `quora_negatives` the non-paraphrase pairs are
  pushed apart (Chen's paired loss), else only paraphrase pairs are used.
- `sup_nli`: SNLI (premise, entailment, contradiction) triplets, contradictions as hard negatives.
- `sup_pairs`: labelled pairs as positives, in-batch negatives (Phillips 3.4: "positive pairs are taken as
  valid paraphrases or sentences with a similarity score of 4 or 5, with all other sentences in batch as
  negatives"): Quora paraphrases and STS pairs with gold >= `min_similarity`, from `data`.
- `sup_quora` with `shuffled_negatives`: David et al. 3.3's SCL: Quora paraphrase pairs plus "a third
  column with shuffled sentences from the positive pairs, ensuring that no sentence ends up in the same
  position" as each pair's hard negative.

The method's projection (harness.model.projection: SimCSE's or Chen's MLP; evaluated only with
`mlp_at_test`) sits on the embedding when it has one.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from harness.data.cs224n import MultitaskData, run_multitask_data
from harness.data.glue import GLUE_TASKS, GlueSplit
from harness.data.glue_source import run_glue
from harness.data.nli import ENTAILMENT, LABELS
from harness.data.paths import require_file
from harness.data.train_sets import load_nli
from harness.errors import HarnessError
from harness.fields import Source, refuse_set, split_commas
from harness.stages.registry import StageSpec, register_stage
from harness.train.batching import length_grouped, random_batches

if TYPE_CHECKING:  # torch, the losses and the loop's Stage are imported where a stage is built
    import torch

    from harness.train.loop import Stage

CONTRADICTION = LABELS["contradiction"]
Kind = Literal["unsup", "sup_quora", "sup_nli", "sup_pairs"]
GlueSource = Literal[tuple(f"glue:{task}" for task in GLUE_TASKS)]  # type: ignore[valid-type]
Sources = Annotated[list[Source | GlueSource], BeforeValidator(split_commas)]
# the fields each kind does not read (refused when set)
IGNORED = {
    "unsup": {"quora_negatives", "shuffled_negatives", "hard_negative_weight", "min_similarity"},
    "sup_quora": {"data", "hard_negative_weight", "min_similarity"},
    "sup_nli": {"data", "quora_negatives", "shuffled_negatives", "min_similarity"},
    "sup_pairs": {"quora_negatives", "shuffled_negatives", "hard_negative_weight"},
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


def unsup_sentences(
    sources: list[str],
    data_dir: Path,
    tasks: Callable[[], MultitaskData],
    glue: Callable[[str], GlueSplit],
) -> list[str]:
    """The distinct sentences of the chosen sources, sorted (an order independent of the hash seed);
    `tasks` gives the CS224N sets, `glue` a GLUE task's train split (read only when a source needs them)."""
    pool = {
        "wiki": lambda: wiki_sentences(data_dir),
        "sst": lambda: tasks().sst_train.texts,
        "quora": lambda: tasks().quora_train.first + tasks().quora_train.second,
        "sts": lambda: tasks().sts_train.first + tasks().sts_train.second,
    }

    def sentences(source: str) -> Any:
        if source.startswith("glue:"):
            split = glue(source.removeprefix("glue:"))
            return split.first + (split.second or [])
        return pool[source]()

    return sorted({s for source in sources for s in sentences(source)})


def labelled_pairs(sources: list[str], tasks: MultitaskData, min_similarity: float) -> list[tuple[str, str]]:
    """Quora paraphrase pairs and STS pairs with gold >= `min_similarity`, as (s1, s2) positives."""
    pairs = []
    if "quora" in sources:
        q = tasks.quora_train
        pairs += [(a, b) for a, b, y in zip(q.first, q.second, q.targets, strict=True) if y == 1]
    if "sts" in sources:
        t = tasks.sts_train
        pairs += [(a, b) for a, b, y in zip(t.first, t.second, t.targets, strict=True) if y >= min_similarity]
    return pairs


def with_shuffled_negatives(pairs: list[tuple[str, str]], seed: int = 0) -> list[tuple[str, str, str]]:
    """(s1, s2, s2 of another pair): a random cyclic shift of a shuffled order, so no pair keeps its own."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    other = {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}
    return [(a, b, pairs[other[i]][1]) for i, (a, b) in enumerate(pairs)]


def project(method: Any, sentences: list[str]) -> torch.Tensor:
    z = method.encoder.embed(sentences)
    return method.projection(z) if method.projection is not None else z


def unsup_loss(method: Any, sentences: list[str], temperature: float) -> dict[str, torch.Tensor]:
    """SimCSE's unsupervised InfoNCE: row i of the first pass against row i of the second."""
    from harness.losses import info_nce

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
    shuffled_negatives: bool = Field(
        False, description="sup_quora: another pair's sentence as hard negative (David et al.)"
    )
    min_similarity: float = Field(4.0, description="sup_pairs: STS pairs with gold >= this are positives")
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
        if self.shuffled_negatives:
            refuse_set(
                self, {"quora_negatives"}, "with shuffled_negatives (another pair's sentence is the negative)"
            )
        if self.contrastive == "sup_pairs" and "data" not in self.model_fields_set:
            self.data = ["quora", "sts"]  # Phillips: paraphrases and STS pairs of 4 or 5
        if self.contrastive == "sup_pairs" and not set(self.data) <= {"quora", "sts"}:
            raise ValueError("sup_pairs takes its pairs from quora and sts; set data to those")
        return self

    def unread(self) -> set[str]:
        return IGNORED[self.contrastive]

    def reads_quora(self) -> bool:
        return self.contrastive == "sup_quora" or (self.contrastive != "sup_nli" and "quora" in self.data)

    def reads_glue(self) -> bool:
        return self.contrastive == "unsup" and any(source.startswith("glue:") for source in self.data)

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
        elif self.contrastive == "unsup":
            root = sources.data_dir
            examples = unsup_sentences(
                self.data,
                root,
                functools.partial(run_multitask_data, run, root),
                lambda task: run_glue(run, root, task, "train"),
            )
        else:
            tasks = run_multitask_data(run, sources.data_dir)
            if self.contrastive == "sup_quora" and self.shuffled_negatives:
                examples = with_shuffled_negatives(labelled_pairs(["quora"], tasks, self.min_similarity))
            elif self.contrastive == "sup_quora":
                q = tasks.quora_train
                examples = [(a, b, int(y)) for a, b, y in zip(q.first, q.second, q.targets, strict=True)
                            if self.quora_negatives or y == 1]  # fmt: skip
            else:
                examples = labelled_pairs(self.data, tasks, self.min_similarity)
        if not examples:
            raise HarnessError(
                f"the training set is empty: the {self.contrastive} contrastive stage found no examples "
                f"(data {self.data}, min_similarity {self.min_similarity}); name a data set or loosen "
                "the filter"
            )
        return examples[: self.limit] if self.limit else examples

    def loss(self, method: Any, batch: list[Any]) -> dict[str, torch.Tensor]:
        import torch

        from harness.losses import info_nce, paired_info_nce

        if self.contrastive == "unsup":
            return unsup_loss(method, batch, self.temperature)
        n, tau = len(batch), self.temperature
        if self.contrastive == "sup_pairs":
            z = project(method, [b[0] for b in batch] + [b[1] for b in batch])
            return {"loss": info_nce(z[:n], z[n:], temperature=tau)}
        if self.contrastive == "sup_quora" and not self.shuffled_negatives:
            z = project(method, [b[0] for b in batch] + [b[1] for b in batch])
            if self.quora_negatives:
                labels = torch.tensor([b[2] for b in batch], device=z.device)
                return {"loss": paired_info_nce(z[:n], z[n:], labels, tau)}
            return {"loss": info_nce(z[:n], z[n:], temperature=tau)}
        z = project(method, [b[0] for b in batch] + [b[1] for b in batch] + [b[2] for b in batch])
        return {"loss": info_nce(z[:n], z[n : 2 * n], z[2 * n :], tau, self.hard_negative_weight)}

    def build(self, method: Any, settings: Any, data: list[Any]) -> Stage:
        from harness.train.loop import Stage

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
