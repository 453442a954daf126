"""`contrastive: unsup` (unsupervised SimCSE, Gao et al. 2021): each sentence against a second dropout pass
of itself (both passes in one forward call: dropout masks differ per row), in-batch negatives. Sentences
from `data`: wiki (the SimCSE corpus), sst, quora, sts (the CS224N training sets), or `glue:<TASK>`: the
distinct sentences of a GLUE task's train split, both sentences of a pair, from the pipeline's GLUE
source (SupCL-Seq Table 3's "re-implementation of Gao et al. (2021)" on the task)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from harness.data.cs224n import MultitaskData
from harness.data.glue import GLUE_TASKS, GlueSplit
from harness.data.lineage import cached_reader
from harness.data.paths import require_file
from harness.fields import Source, split_commas
from harness.stages.contrastive.base import ContrastiveStage, info_nce_loss, register_contrastive

if TYPE_CHECKING:
    import torch

    from harness.stages.registry import StageContext, StageSources

if TYPE_CHECKING:  # mypy cannot read a Literal built at run time: a str to it (pydantic checks the names)
    GlueSource = str
else:
    GlueSource = Literal[tuple(f"glue:{task}" for task in GLUE_TASKS)]
Sources = Annotated[list[Source | GlueSource], BeforeValidator(split_commas)]


@cached_reader(maxsize=2)
def wiki_sentences(data_dir: Path) -> tuple[str, ...]:
    """The unsupervised SimCSE corpus (its first 11,914 sentences offline)."""
    path = require_file(data_dir / "wiki" / "wiki1m_head.txt")
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


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


def simcse_loss(ctx: StageContext, sentences: Sequence[str], temperature: float) -> dict[str, torch.Tensor]:
    """SimCSE's unsupervised InfoNCE: row i of the first pass against row i of the second."""
    return info_nce_loss(ctx, [list(sentences), list(sentences)], temperature)


@register_contrastive("unsup")
class UnsupStage(ContrastiveStage):
    contrastive: Literal["unsup"] = "unsup"
    data: Sources = Field(default_factory=lambda: ["wiki"], description="the sentence sources")

    def reads_quora(self) -> bool:
        return "quora" in self.data

    def reads_glue(self) -> bool:
        return any(source.startswith("glue:") for source in self.data)

    def examples(self, sources: StageSources) -> list[str]:
        return unsup_sentences(self.data, sources.data_dir, sources.tasks, lambda t: sources.glue(t, "train"))

    def examples_by_source(self, sources: StageSources) -> dict[str, list[str]]:
        glue = lambda t: sources.glue(t, "train")  # noqa: E731 - the reader unsup_sentences takes
        return {
            source: unsup_sentences([source], sources.data_dir, sources.tasks, glue) for source in self.data
        }

    def loss(self, ctx: StageContext, batch: list[str]) -> dict[str, torch.Tensor]:
        return simcse_loss(ctx, batch, self.temperature)
