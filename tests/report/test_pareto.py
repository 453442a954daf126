"""`kind: pareto` / `pareto_table` (harness/report/parts/pareto.py): the front of configurations (seeds
averaged) in each objective's direction, checked against a brute-force dominance count; the figure marks it
and the table lists it."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.errors import HarnessError
from harness.report.parts.base import PartContext
from harness.report.parts.pareto import ParetoFigure, ParetoTable, dominates, pareto_frame
from tests.report.drawn import capture_figures


def _frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"lam": lam, "seed": s, "sts": rng.normal(80, 2), "seconds": rng.uniform(10, 100)}
            for lam, s in itertools.product([0.1, 0.3, 0.5, 0.7, 0.9], [1, 2])]  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("seed", range(5))
def test_the_front_is_the_configurations_no_other_beats(seed: int) -> None:
    frame = _frame(seed)
    spec = ParetoTable(name="t", kind="pareto_table", label="{lam}")  # the study's objectives, below
    study = [("sts", "maximize"), ("seconds", "minimize")]
    ctx = PartContext(None, frame, Path("."), "", None, objectives=study)  # type: ignore[arg-type]
    table = pareto_frame(frame, spec, spec.axes(ctx))
    means = frame.groupby("lam")[["sts", "seconds"]].mean()  # seeds averaged: one point per configuration
    assert np.allclose(table[["x", "y"]].to_numpy(), means.to_numpy()) and (table["runs"] == 2).all()
    points = list(means.itertuples(index=False, name=None))
    brute = [not any(o[0] >= p[0] and o[1] <= p[1] and o != p for o in points) for p in points]
    assert table["front"].tolist() == brute and any(brute)


def test_without_axes_or_study_objectives_it_says_what_to_name(tmp_path: Path) -> None:
    ctx = PartContext(None, _frame(0), tmp_path, "", None)  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="pareto p: name x and y"):
        ParetoTable(name="p", kind="pareto_table", label="{lam}").write(ctx)
    assert not (tmp_path / "p.tex").exists()


def test_dominance_follows_each_direction() -> None:
    assert dominates((2, 1), (1, 1), ("maximize", "maximize"))
    assert not dominates((1, 1), (1, 1), ("maximize", "maximize"))  # equal: neither dominates
    assert dominates((2, 1), (1, 2), ("maximize", "minimize")) and not dominates(
        (2, 3), (1, 2), ("maximize", "minimize")
    )


def test_the_figure_marks_the_front_and_the_table_lists_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    frame = pd.DataFrame(
        {"lambda": [0.1, 0.5, 0.9, 0.7], "sts": [80.0, 82.0, 79.0, 81.0], "tr": [70.0, 68.0, 69.0, 71.0]}
    )
    ctx = PartContext(None, frame, tmp_path, "p/", None)  # type: ignore[arg-type]
    fields = {"label": "lambda = {lambda}", "x": "sts", "y": "tr", "x_label": "STS", "y_label": "transfer"}
    saved = capture_figures(monkeypatch)
    assert ParetoFigure(name="f", kind="pareto", **fields).write(ctx).endswith("{p/f.png}\\end{figure}")
    (ax,) = saved["f.png"].axes
    front_line = ax.get_lines()[0]
    assert list(front_line.get_xdata()) == [81.0, 82.0] and list(front_line.get_ydata()) == [71.0, 68.0]
    assert ax.get_xlabel() == "STS (higher is better)"
    table = ParetoTable(name="t", kind="pareto_table", **fields).write(ctx)
    latex = (tmp_path / "t.tex").read_text()
    assert table == "\\input{p/t.tex}" and "2 of 4 configurations" in latex
    rows = [line for line in latex.splitlines() if line.startswith("$\\lambda$")]
    assert rows == ["$\\lambda$ = 0.5 & 82.00 & 68.00 & 1 \\\\", "$\\lambda$ = 0.7 & 81.00 & 71.00 & 1 \\\\"]
