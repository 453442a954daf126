"""Embedding geometry: alignment and uniformity (Wang & Isola, 2020) on STS-B dev, as SimCSE's Fig. 2
reports them.

With f(x) L2-normalised:
    alignment  = E_{(x, y) ~ p_pos} ||f(x) - f(y)||^2           (alpha = 2; lower is better)
    uniformity = log E_{x, y ~ p_data, x != y} exp(-2 ||f(x) - f(y)||^2)   (t = 2; lower is better)
SimCSE takes STS-B pairs with gold score >= 4 as p_pos and all STS-B sentences as p_data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.data.senteval import STSPairs
from harness.evaluate.registry import ScoreOptions, register_task
from harness.evaluate.tasks.sts import load_sts_task, pair_sentences


def _normalise(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True).clip(min=1e-12)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """Mean ||x_i - y_i||^alpha over positive pairs (rows of x and y)."""
    return float((np.linalg.norm(_normalise(x) - _normalise(y), axis=1) ** alpha).mean())


def uniformity(x: np.ndarray, t: float = 2.0) -> float:
    """log of the mean of exp(-t ||x_i - x_j||^2) over distinct pairs i < j."""
    z = _normalise(x)
    squared = np.clip(2.0 - 2.0 * z @ z.T, 0.0, None)  # ||a - b||^2 = 2 - 2 a.b for unit vectors
    upper = np.triu_indices(len(z), k=1)
    return float(np.log(np.exp(-t * squared[upper]).mean()))


def geometry(pairs: STSPairs, embeddings: dict[str, np.ndarray], threshold: float = 4.0) -> dict[str, float]:
    """Alignment over pairs scored >= threshold and uniformity over every distinct sentence."""
    positive = pairs.scores >= threshold
    left = np.stack([embeddings[s] for s, keep in zip(pairs.sent1, positive, strict=True) if keep])
    right = np.stack([embeddings[s] for s, keep in zip(pairs.sent2, positive, strict=True) if keep])
    sentences = sorted(set(pairs.sent1) | set(pairs.sent2))
    return {
        "alignment": alignment(left, right),
        "uniformity": uniformity(np.stack([embeddings[s] for s in sentences])),
        "n_pos": int(positive.sum()),
        "n": len(sentences),
    }


GEOMETRY = "AlignUniform"


def _score(subsets: Sequence[STSPairs], embeddings: dict, options: ScoreOptions) -> dict[str, object]:
    return dict(geometry(subsets[0], embeddings))  # typed as every scorer's result (dict is invariant)


@register_task(
    GEOMETRY, kind="geometry", sentences=pair_sentences, scorer=_score, main_score="uniformity",
    splits=("dev",), description="alignment (pairs with gold >= 4), uniformity: STS-B dev",
    scores=("alignment", "uniformity", "n_pos"),  # geometry's, `n` aside
)  # fmt: skip
def load_geometry(data_dir: Path, variant: str) -> tuple[STSPairs, ...]:
    return load_sts_task(data_dir, "STSBenchmark", variant, "dev")  # type: ignore[arg-type]
