"""`kind: projection`: SST dev embeddings in 2-D, one panel per run, coloured by the sentiment label
(Phillips Fig. 3, which uses UMAP; t-SNE from scikit-learn when `umap-learn` is not installed, named in
the figure). The runs saved their embeddings with `save_embeddings: true`."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from harness.errors import HarnessError
from harness.report.collect import labelled_runs
from harness.report.parts.base import FigurePart, PartContext, register_part
from harness.scoring.multitask import SST_EMBEDDINGS

if TYPE_CHECKING:
    import pandas as pd

    from harness.tracking.tracker import Tracker

ARTIFACT = SST_EMBEDDINGS
SENTIMENT = ("very negative", "negative", "neutral", "positive", "very positive")


@register_part("projection")
class Projection(FigurePart):
    """SST dev embeddings of the named runs (saved with `save_embeddings: true`) in 2-D, coloured by the
    sentiment label, one panel per run (Phillips Fig. 3): UMAP where `umap-learn` is installed, else t-SNE."""

    label: str = Field(description="label template over params, e.g. '{variant}'")
    runs: list[str] = Field(min_length=1, description="labels of the runs drawn, one panel each")
    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        from harness.data.cs224n import multitask_data
        from harness.data.paths import resolve_data_dir

        labels = multitask_data(resolve_data_dir(ctx.data_dir), None).sst_dev.labels
        projection_figure(saved_embeddings(ctx.tracker, ctx.frame, self), labels, self, path)


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
    from harness.report.figures import plt  # matplotlib on its file backend, imported when drawing

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
