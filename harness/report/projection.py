"""2-D projections of SST dev embeddings, coloured by the sentiment label (Phillips Fig. 3, which uses
UMAP; t-SNE from scikit-learn when `umap-learn` is not installed, named in the figure)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from harness.data.cs224n import multitask_data  # noqa: E402
from harness.data.paths import resolve_data_dir  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.objectives.multitask import SST_EMBEDDINGS  # noqa: E402
from harness.report.collect import labelled_runs  # noqa: E402
from harness.tracking.tracker import Tracker  # noqa: E402

if TYPE_CHECKING:
    from harness.report.parts.projection import Projection

ARTIFACT = SST_EMBEDDINGS
SENTIMENT = ("very negative", "negative", "neutral", "positive", "very positive")


def reduce_2d(vectors: np.ndarray) -> tuple[np.ndarray, str]:
    """(points [n, 2], the method's name): UMAP where installed, else t-SNE, both seeded."""
    try:
        import umap  # type: ignore[import-not-found]

        return umap.UMAP(random_state=0).fit_transform(vectors), "UMAP"
    except ImportError:
        from sklearn.manifold import TSNE

        return TSNE(n_components=2, random_state=0, init="pca").fit_transform(vectors), "t-SNE"


def saved_embeddings(tracker: Tracker, frame: pd.DataFrame, spec: Projection) -> dict[str, np.ndarray]:
    runs = labelled_runs(frame, spec.label, spec.runs, f"figure {spec.name}")
    out = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, run_id in runs.items():
            try:
                path = tracker.download(run_id, ARTIFACT, scratch)
            except Exception:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
                raise HarnessError(
                    f"figure {spec.name}: run {label!r} saved no {ARTIFACT}; run the study with "
                    "save_embeddings: true"
                ) from None
            out[label] = np.load(path, allow_pickle=False)
    return out


def projection_figure(
    embeddings: dict[str, np.ndarray], labels: np.ndarray, spec: Projection, path: Path
) -> None:
    fig, axes = plt.subplots(1, len(embeddings), figsize=(4.2 * len(embeddings), 4), squeeze=False)
    method = ""
    for ax, (name, vectors) in zip(axes[0], embeddings.items(), strict=True):
        points, method = reduce_2d(vectors)
        scatter = ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", s=4, vmin=0, vmax=4)
        ax.set_title(name)
        ax.set_xticks([])
        ax.set_yticks([])
    bar = fig.colorbar(scatter, ax=axes[0].tolist(), ticks=range(5))
    bar.ax.set_yticklabels(SENTIMENT)
    fig.suptitle(f"{spec.title or 'SST dev embeddings'} ({method})")
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)


def projection(tracker: Tracker, frame: pd.DataFrame, spec: Projection, path: Path) -> None:
    labels = multitask_data(resolve_data_dir(None), None).sst_dev.labels
    projection_figure(saved_embeddings(tracker, frame, spec), labels, spec, path)
