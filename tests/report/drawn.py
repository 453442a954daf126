"""What a report figure draws: the matplotlib Figures that harness.report saves, caught as they are saved
(the drawing functions close them after `savefig`, so the test cannot ask `plt.gcf()`), to assert the
plotted data rather than that a PNG exists."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure


def capture_figures(monkeypatch: pytest.MonkeyPatch) -> dict[str, Figure]:
    """Every Figure saved from now on in the test, by the file name it is saved as (`heatmap.png`); each
    is still written, and a closed Figure keeps its axes, artists and data."""
    saved: dict[str, Figure] = {}
    original = Figure.savefig

    def savefig(self: Figure, fname: object, *args: object, **kwargs: object) -> None:
        saved[Path(str(fname)).name] = self
        original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def tick_labels(labels: list) -> list[str]:
    """The texts of an axis' tick labels (`ax.get_xticklabels()`)."""
    return [label.get_text() for label in labels]
