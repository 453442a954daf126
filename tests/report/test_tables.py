"""The report's LaTeX escaping: every special character of plain text survives LaTeX."""

from __future__ import annotations

import pytest

from harness.report.tables import escape_latex


def test_every_latex_special_is_escaped_once() -> None:
    text = r"a_b & 5% $x #1 {y} ~z^ back\slash"
    assert escape_latex(text) == (
        r"a\_b \& 5\% \$x \#1 \{y\} \textasciitilde{}z\textasciicircum{} back\textbackslash{}slash"
    )
    assert escape_latex("plain words 0.5") == "plain words 0.5"


def test_runs_table_averages_seeds_and_prints_the_papers_numbers_with_the_difference() -> None:
    import pandas as pd

    from harness.report.spec import RunsTable
    from harness.report.tables import runs_latex

    frame = pd.DataFrame(
        {"variant": ["fusion", "fusion", "fusion", "baseline"], "seed": [1, 2, 3, 1],
         "dev.overall": [0.50, 0.52, 0.54, 0.40], "dev.sst.acc": [0.46, 0.46, 0.46, 0.51]}
    )  # fmt: skip
    spec = RunsTable(name="t", kind="runs", label="{variant}", digits=3,
                     columns={"Overall": "dev.overall", "SST": "dev.sst.acc"},
                     reference={"fusion": {"Overall": 0.520, "SST": 0.465}},
                     reference_source="Chen")  # fmt: skip
    latex = runs_latex(frame, spec)
    lines = [line for line in latex.splitlines() if "&" in line]
    # mean 0.520, sample std 0.020 over three seeds; the best mean per column in bold
    assert r"fusion ($n=3$) & \textbf{0.520 $\pm$ 0.020} & 0.460 $\pm$ 0.000 \\" in lines
    chen = next(line for line in lines if "Chen" in line)
    delta = next(line for line in lines if "Delta" in line)
    assert "0.520 & 0.465" in chen and "+0.000 & -0.005" in delta
    assert r"baseline & 0.400 & \textbf{0.510} \\" in lines


def test_curve_points_follow_epochs_and_average_seeds(tmp_path) -> None:  # noqa: ANN001
    import pandas as pd

    from harness.report.figures import curve, curve_frame
    from harness.report.spec import Curve

    frame = pd.DataFrame({"run_id": ["a", "b", "c"], "variant": ["x", "x", "y"]})
    history = {"a": {10: 0.5, 20: 0.6, 25: 0.61}, "b": {10: 0.7, 20: 0.8}, "c": {10: 0.1, 20: 0.2}}
    epochs = {"a": {10: 1, 20: 2}, "b": {10: 1, 20: 2}, "c": {10: 1, 20: 2}}
    spec = Curve(name="fig", kind="curve", metric="dev.overall", label="{variant}", x="epoch")
    points = curve_frame(frame, spec, history, epochs)
    assert sorted(points[points.label == "x"].x.unique()) == [1, 2]  # step 25 is no epoch end
    means = points.groupby(["label", "x"])["value"].mean()
    assert means[("x", 2)] == pytest.approx(0.7) and means[("y", 1)] == pytest.approx(0.1)
    curve(points, spec, tmp_path / "fig.png")
    assert (tmp_path / "fig.png").stat().st_size > 1000
