"""The SST dev embeddings a trial saves, and their 2-D projection figure (Phillips Fig. 3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.data.cs224n import multitask_data
from harness.report.parts import projection as projection_module
from harness.report.parts.projection import ARTIFACT, SENTIMENT, Projection, projection_figure, reduce_2d
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, tiny_study
from tests.report.drawn import capture_figures, tick_labels


@pytest.mark.slow
def test_a_trial_saves_its_sst_dev_embeddings(tmp_path: Path, tiny_bert: Path, data_dir: Path) -> None:
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="saved-embeddings", method="multitask",
                      batch_size=4, max_steps=1, save_embeddings=True)  # fmt: skip
    run_study(load_study(path), progress=False)
    (run,) = child_runs("saved-embeddings")
    saved = np.load(Tracker().client.download_artifacts(run.info.run_id, ARTIFACT, str(tmp_path)))
    assert (
        saved.shape == (len(multitask_data(data_dir, None).sst_dev.texts), 32) and saved.dtype == np.float32
    )


def test_projection_separates_separable_classes_and_draws_a_panel_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reduce_2d keeps five separable classes apart; the figure draws one panel per run, titled with its
    label, each point where the 2-D reduction of that run's embeddings put it (the real reduction above; a
    known stand-in in the figure, so the drawn points can be compared exactly), coloured by its sentiment
    label on a fixed 0-4 scale whose colour bar names the five classes, the method in the title."""
    rng = np.random.default_rng(0)
    labels = np.arange(200) % 5
    vectors = (np.eye(5)[labels] * 20 + rng.normal(size=(200, 5))).astype(np.float32)
    points, method = reduce_2d(vectors)
    assert points.shape == (200, 2) and method in ("UMAP", "t-SNE")
    centres = np.stack([points[labels == k].mean(0) for k in range(5)])
    within = np.mean([np.linalg.norm(points[labels == k] - centres[k], axis=1).mean() for k in range(5)])
    between = np.mean([np.linalg.norm(a - b) for i, a in enumerate(centres) for b in centres[i + 1 :]])
    assert between > 3 * within  # the five clusters stay apart in 2-D
    spec = Projection(name="p", kind="projection", label="{variant}", runs=["a", "b"])
    drawn = capture_figures(monkeypatch)
    monkeypatch.setattr(projection_module, "reduce_2d", lambda v: (v[:, :2] * 3 + v[:, 2:4], "t-SNE"))
    reversed_vectors = vectors[::-1].copy()
    shown = np.minimum(labels, 3)  # no "very positive" sentence: the colour scale still spans all five
    projection_figure({"a": vectors, "b": reversed_vectors}, shown, spec, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 5000
    figure = drawn["p.png"]
    *panels, bar = figure.axes
    assert [ax.get_title() for ax in panels] == ["a", "b"]
    for ax, run in zip(panels, (vectors, reversed_vectors), strict=True):
        (scatter,) = ax.collections
        np.testing.assert_allclose(scatter.get_offsets(), run[:, :2] * 3 + run[:, 2:4], rtol=1e-6)
        np.testing.assert_array_equal(scatter.get_array(), shown)  # each point's own sentiment label
        assert scatter.get_clim() == (0, 4)
    assert tick_labels(bar.get_yticklabels()) == list(SENTIMENT)
    assert figure.get_suptitle() == "SST dev embeddings (t-SNE)"
