"""Alignment and uniformity (Wang & Isola, 2020) on STS-B dev, as SimCSE's Fig. 2
(harness.evaluate.geometry)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.data.senteval import STSPairs
from harness.evaluate.geometry import geometry
from harness.evaluate.registry import ScoreOptions, register_task
from harness.evaluate.sts import load_sts_task
from harness.evaluate.tasks.sts import pair_sentences

GEOMETRY = "AlignUniform"


def _score(subsets: Sequence[STSPairs], embeddings: dict, options: ScoreOptions) -> dict[str, object]:
    return geometry(subsets[0], embeddings)


@register_task(
    GEOMETRY, kind="geometry", sentences=pair_sentences, scorer=_score, main_score="uniformity",
    splits=("dev",), description="alignment (pairs with gold >= 4), uniformity: STS-B dev",
    scores=("alignment", "uniformity", "n_pos"),  # harness.evaluate.geometry.geometry's, `n` aside
)  # fmt: skip
def load_geometry(data_dir: Path, variant: str) -> tuple[STSPairs, ...]:
    return load_sts_task(data_dir, "STSBenchmark", variant, "dev")  # type: ignore[arg-type]
