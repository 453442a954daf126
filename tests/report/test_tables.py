"""The report's LaTeX escaping: every special character of plain text survives LaTeX."""

from __future__ import annotations

import numpy as np
import pytest

from harness.report.tables import escape_latex
from tests.report.drawn import capture_figures, tick_labels


def test_every_latex_special_is_escaped_once() -> None:
    text = r"a_b & 5% $x #1 {y} ~z^ back\slash"
    assert escape_latex(text) == (
        r"a\_b \& 5\% \$x \#1 \{y\} \textasciitilde{}z\textasciicircum{} back\textbackslash{}slash"
    )
    assert escape_latex("plain words 0.5") == "plain words 0.5"
    assert escape_latex("--retry-failed a---b") == "-{}-retry-failed a-{}-{}-b"  # no dash ligatures
    assert escape_latex("[0.0,0.1]") == "{[}0.0,0.1{]}"  # after a \\ a bare [ opens its spacing argument


def test_runs_table_averages_seeds_and_prints_the_papers_numbers_with_the_difference() -> None:
    import pandas as pd

    from harness.report.parts.runs_table import RunsTable, runs_latex

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
    assert r"fusion ($n=3$) & 0.520 $\pm$ 0.020 & 0.460 $\pm$ 0.000 \\" in lines
    chen = next(line for line in lines if "Chen" in line)
    delta = next(line for line in lines if "Delta" in line)
    assert "0.520 & 0.465" in chen and "+0.000 & -0.005" in delta
    assert r"baseline & 0.400 & 0.510 \\" in lines


def test_curve_points_follow_epochs_and_average_seeds(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The curve draws one line per label at the epochs, through the mean of its runs (x: 0.6 and 0.7
    of runs a and b, not their max or min), the min-max band where a label has several runs, and its
    axes name epoch and the metric."""
    import pandas as pd

    from harness.report.figures import curve
    from harness.report.parts.curve import Curve, curve_frame

    frame = pd.DataFrame({"run_id": ["a", "b", "c"], "variant": ["x", "x", "y"]})
    history = {"a": {10: 0.5, 20: 0.6, 25: 0.61}, "b": {10: 0.7, 20: 0.8}, "c": {10: 0.1, 20: 0.2}}
    epochs = {"a": {10: 1, 20: 2}, "b": {10: 1, 20: 2}, "c": {10: 1, 20: 2}}
    spec = Curve(name="fig", kind="curve", metric="dev.overall", label="{variant}", x="epoch")
    points = curve_frame(frame, spec, history, epochs)
    assert sorted(points[points.label == "x"].x.unique()) == [1, 2]  # step 25 is no epoch end
    means = points.groupby(["label", "x"])["value"].mean()
    assert means[("x", 2)] == pytest.approx(0.7) and means[("y", 1)] == pytest.approx(0.1)
    drawn = capture_figures(monkeypatch)
    curve(points, spec, tmp_path / "fig.png")
    assert (tmp_path / "fig.png").stat().st_size > 1000
    ax = drawn["fig.png"].axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines) == ["x", "y"]  # one line per label, in the runs' order
    assert list(lines["x"].get_xdata()) == [1, 2] and list(lines["y"].get_xdata()) == [1, 2]
    np.testing.assert_allclose(lines["x"].get_ydata(), [0.6, 0.7])  # the mean of a and b per epoch
    np.testing.assert_allclose(lines["y"].get_ydata(), [0.1, 0.2])
    (band,) = ax.collections  # x's min-max spread only: y has one run
    ys = band.get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(0.5) and max(ys) == pytest.approx(0.8)
    assert ax.get_xlabel() == "epoch" and ax.get_ylabel() == "dev overall score"
    assert tick_labels(ax.get_legend().get_texts()) == ["x", "y"]


def _table(**fields: object):  # noqa: ANN202
    from harness.report.parts.runs_table import RunsTable

    return RunsTable.model_validate({"name": "t", "kind": "runs", "digits": 2, **fields})


def _cells(latex: str) -> list[list[str]]:
    lines = [line.strip().removesuffix("\\\\").strip() for line in latex.splitlines() if "&" in line]
    return [[cell.strip() for cell in line.split("&")] for line in lines]


def test_where_keeps_one_row_of_the_grid_as_liao_table_6() -> None:
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    frame = pd.DataFrame({"lambda": [0.1, 0.1, 0.5, 0.5], "tau": [1, 0.1, 1, 0.1],
                          "sts": [70.0, 60.0, 69.0, 61.0]})  # fmt: skip
    rows = _cells(runs_latex(frame, _table(label="{lambda}", columns={"Avg.": "sts"}, where={"tau": 1.0})))
    assert rows[1:] == [["0.1", r"70.00"], ["0.5", "69.00"]]
    with pytest.raises(Exception, match="no run has"):
        runs_latex(frame, _table(label="{lambda}", columns={"Avg.": "sts"}, where={"tau": 0.3}))


def test_derived_columns_and_rows_and_the_transposed_layout() -> None:
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    frame = pd.DataFrame({"variant": ["cos", "lin"], "a": [0.6, 0.5], "b": [0.2, 0.4]})
    spec = _table(label="{variant}", columns={"A": "a", "B": "b"}, rows=["lin", "cos"],
                  derived_columns={"Mean": {"op": "mean", "of": ["A", "B"]}},
                  derived_rows={"Difference": {"op": "difference", "of": ["cos", "lin"]}},
                  reference={"cos": {"A": 0.55}}, reference_source="David")  # fmt: skip
    rows = _cells(runs_latex(frame, spec))
    assert rows[1] == ["lin", "0.50", r"0.40", r"0.45"]
    assert rows[2] == ["cos", r"0.60", "0.20", "0.40"]
    assert rows[3][1] == "0.55" and rows[4][1] == "+0.05"  # the paper's value and harness - paper
    assert rows[5] == ["Difference", "0.10", "-0.20", "-0.05"]  # cos - lin, never bold
    transposed = _cells(runs_latex(frame, spec.model_copy(update={"transpose": True})))
    assert transposed[0][1:] == ["lin", "cos", "Difference"]
    assert transposed[1] == ["A", "0.50", r"0.60", "0.10"]
    assert transposed[2][2] == "0.55" and transposed[3][2] == "+0.05"  # under A, in the cos column
    assert transposed[4][0] == "B"


def test_a_derived_row_is_never_bold_and_a_derived_mean_needs_every_part() -> None:
    """A difference row larger than every run's mean stays unbolded (it is no model); a derived mean of
    a row missing one of its parts is "--", not the mean of the others (a mean over fewer columns is
    not the paper's)."""
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    frame = pd.DataFrame({"variant": ["cos", "lin"], "a": [0.6, -0.3], "b": [0.2, None]})
    spec = _table(label="{variant}", columns={"A": "a", "B": "b"}, rows=["cos", "lin"],
                  derived_columns={"Mean": {"op": "mean", "of": ["A", "B"]}},
                  derived_rows={"Difference": {"op": "difference", "of": ["cos", "lin"]}})  # fmt: skip
    rows = _cells(runs_latex(frame, spec))
    assert rows[1] == ["cos", r"0.60", r"0.20", r"0.40"]
    assert rows[2] == ["lin", "-0.30", "--", "--"]
    assert rows[3] == ["Difference", "0.90", "--", "--"]


def test_n_counts_the_runs_of_the_best_covered_metric() -> None:
    """Two runs share a label, one scored on both tasks, one on CoLA only: the row is n = 2 (its CoLA
    mean of two runs, with their spread), RTE that row's one value."""
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    frame = pd.DataFrame({"views": ["0.1"] * 2, "cola": [60.0, 62.0], "rte": [65.0, None]})
    rows = _cells(runs_latex(frame, _table(label="{views}", columns={"CoLA": "cola", "RTE": "rte"})))
    assert rows[1][:2] == ["0.1 ($n=2$)", r"61.00 $\pm$ 1.41"]


def test_runs_of_different_tasks_share_a_row_and_count_once() -> None:
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    frame = pd.DataFrame({"views": ["0.1,0.1"] * 2, "cola": [60.0, None], "rte": [None, 65.0]})
    rows = _cells(runs_latex(frame, _table(label="{views}", columns={"CoLA": "cola", "RTE": "rte"})))
    assert rows[1] == ["0.1,0.1", r"60.00", r"65.00"]
    frame["variant"] = ["single_sst", "single_sts"]
    renamed = _table(label="{variant}", columns={"CoLA": "cola", "RTE": "rte"},
                     rename={"single_sst": "single task", "single_sts": "single task"})  # fmt: skip
    assert _cells(runs_latex(frame, renamed))[1] == rows[1][:0] + ["single task", *rows[1][1:]]


def test_bar_change_is_the_mean_difference_over_pairs(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`change`: one bar, the mean of after - before over the pairs, its error bar their sample std; without
    it, one bar per label in each group (column), as tall as the label's mean over its runs, with the std
    as its error bar, and the groups named on the x axis."""
    import pandas as pd
    from matplotlib.container import BarContainer

    from harness.report.parts.bar import Bar, bar, bar_frame

    frame = pd.DataFrame({"variant": ["a.cos", "a.lin", "b.cos", "b.lin"], "sts": [0.5, 0.3, 0.4, 0.4]})
    spec = Bar(name="f", kind="bar", label="{variant}", columns={"STS": "sts"},
               change=[("a.cos", "a.lin"), ("b.cos", "b.lin")])  # fmt: skip
    mean, std = bar_frame(frame, spec)
    assert mean.iloc[0]["STS"] == pytest.approx(-0.1) and std.iloc[0]["STS"] == pytest.approx(
        0.1414, abs=1e-4
    )
    drawn = capture_figures(monkeypatch)
    bar(mean, std, spec, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 1000
    ax = drawn["f.png"].axes[0]
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert [b.get_height() for b in bars] == [pytest.approx(-0.1)] and bars.get_label() == "mean change (n=2)"
    (whisker,) = bars.errorbar.lines[2]
    np.testing.assert_allclose(whisker.get_segments()[0][:, 1], [-0.1 - 0.14142, -0.1 + 0.14142], atol=1e-5)
    assert tick_labels(ax.get_xticklabels()) == ["STS"]

    frame = pd.DataFrame({"variant": ["a", "a", "b"], "sts": [0.5, 0.7, 0.2], "sst": [0.4, 0.4, 0.9]})
    spec = Bar(name="g", kind="bar", label="{variant}", columns={"STS": "sts", "SST": "sst"})
    bar(*bar_frame(frame, spec), spec, tmp_path / "g.png")
    ax = drawn["g.png"].axes[0]
    a, b = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert (a.get_label(), b.get_label()) == ("a", "b")
    np.testing.assert_allclose([r.get_height() for r in a], [0.6, 0.4])  # a's mean in STS, then in SST
    np.testing.assert_allclose([r.get_height() for r in b], [0.2, 0.9])
    centres = [[r.get_x() + r.get_width() / 2 for r in bars] for bars in (a, b)]
    np.testing.assert_allclose(centres, [[-0.2, 0.8], [0.2, 1.2]])  # a left of b in each group
    spread = [segment[:, 1] for segment in a.errorbar.lines[2][0].get_segments()]
    np.testing.assert_allclose(spread[0], [0.6 - 0.14142, 0.6 + 0.14142], atol=1e-5)  # std of 0.5, 0.7
    assert tick_labels(ax.get_xticklabels()) == ["STS", "SST"]


def test_line_draws_a_metric_against_a_param(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The `where`'s runs only, one line for tau 1: the metric's values at each lambda, λ on the x axis."""
    import pandas as pd

    from harness.report.figures import curve
    from harness.report.parts.line import Line, line_frame

    frame = pd.DataFrame({"lambda": [0.1, 0.5, 0.1, 0.5], "tau": [1, 1, 0.1, 0.1], "m": [1.0, 2.0, 3.0, 4.0]})
    spec = Line(name="l", kind="line", x="lambda", metric="m", label="tau {tau}", where={"tau": 1})
    points = line_frame(frame, spec)
    assert list(points["value"]) == [1.0, 2.0] and set(points["label"]) == {"tau 1.0"}
    drawn = capture_figures(monkeypatch)
    curve(points, spec, tmp_path / "l.png")
    assert (tmp_path / "l.png").stat().st_size > 1000
    ax = drawn["l.png"].axes[0]
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [0.1, 0.5] and list(line.get_ydata()) == [1.0, 2.0]
    assert line.get_label() == "tau 1.0" and ax.get_xlabel() == "λ" and ax.get_ylabel() == "m"
    assert not ax.collections  # one run per point: no spread band


def test_grid_with_renamed_values_a_difference_row_and_the_papers_values() -> None:
    import pandas as pd

    from harness.report.parts.grid_table import GridTable, grid_latex

    frame = pd.DataFrame({"similarity_head": ["linear", "cosine", "linear", "cosine"],
                          "variant": ["a", "a", "b", "b"], "m": [0.577, 0.593, 0.562, 0.588]})  # fmt: skip
    spec = GridTable(name="g", kind="grid", rows="similarity_head", columns="variant", metric="m", digits=3,
                     rename={"linear": "Only Linear", "cosine": "Cosine"},
                     derived_rows={"Difference": {"op": "difference", "of": ["Cosine", "Only Linear"]}},
                     reference={"Cosine": {"a": 0.590}})  # fmt: skip
    latex = grid_latex(frame, spec)
    assert r"similarity\_head \textbackslash{} variant" in latex  # a param name is LaTeX text
    rows = _cells(latex)
    assert rows[1] == ["Cosine", r"0.593", "0.588"]  # the best cell of the whole grid
    assert rows[2][1] == "0.590" and rows[3][1] == "+0.003"
    assert rows[4] == ["Only Linear", "0.577", "0.562"]
    assert rows[5] == ["Difference", "0.016", "0.026"]


def _seeded_grid():  # noqa: ANN202
    """Three seeds in each lambda x tau cell, spread unevenly: each cell's mean (62, 70; 53, 68) differs
    from its max, min, median, first and last run, and the best mean (70) is not in the cell with the
    best run (84)."""
    import pandas as pd

    scores = {(0.1, 0.1): [60.0, 61.0, 65.0], (0.1, 1.0): [70.0, 70.0, 70.0],
              (0.5, 0.1): [50.0, 52.0, 57.0], (0.5, 1.0): [60.0, 60.0, 84.0]}  # fmt: skip
    rows = [{"lambda": lam, "tau": tau, "seed": seed, "STS12-16.wmean": value}
            for (lam, tau), values in scores.items() for seed, value in enumerate(values, 1)]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_grid_cell_is_the_mean_of_its_runs() -> None:
    """Issue 43: a grid cell over several runs (seeds) shows their mean, sample std and n, and the bold
    best cell is the best mean, so an aggregation other than the mean (max, min, first, median) fails."""
    from harness.report.parts.grid_table import GridTable, grid_latex
    from harness.report.tables import grid_frame

    frame = _seeded_grid()
    spec = GridTable(name="g", kind="grid", rows="lambda", columns="tau", metric="STS12-16.wmean")
    rows = _cells(grid_latex(frame, spec))
    assert rows[0] == [r"$\lambda$ \textbackslash{} $\tau$", "0.1", "1"]
    assert rows[1] == ["0.1 ($n=3$)", r"62.00 $\pm$ 2.65", r"70.00 $\pm$ 0.00"]
    assert rows[2] == ["0.5 ($n=3$)", r"53.00 $\pm$ 3.61", r"68.00 $\pm$ 13.86"]
    grid = grid_frame(frame, "lambda", "tau", "STS12-16.wmean", "g")
    assert grid.to_numpy().tolist() == [[62.0, 70.0], [53.0, 68.0]]


def test_the_heatmap_draws_the_grid_of_means_rows_down_columns_across(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The heatmap's image is the grid of cell means with lambda down (rows) and tau across (columns), as
    its tick labels and axis names say; each cell is printed with its mean, the best mean is outlined,
    and the title and colour bar name the metric."""
    from harness.report.parts.heatmap import Heatmap, heatmap

    spec = Heatmap(name="h", kind="heatmap", rows="lambda", columns="tau", metric="STS12-16.wmean")
    drawn = capture_figures(monkeypatch)
    heatmap(_seeded_grid(), spec, tmp_path / "h.png")
    assert (tmp_path / "h.png").stat().st_size > 1000
    ax, bar = drawn["h.png"].axes
    np.testing.assert_array_equal(ax.images[0].get_array(), [[62.0, 70.0], [53.0, 68.0]])
    assert tick_labels(ax.get_xticklabels()) == ["0.1", "1"] and ax.get_xlabel() == "τ"
    assert tick_labels(ax.get_yticklabels()) == ["0.1", "0.5"] and ax.get_ylabel() == "λ"
    printed = [(t.get_position(), t.get_text()) for t in ax.texts]  # at (column, row)
    assert printed == [((0, 0), "62.00"), ((1, 0), "70.00"), ((0, 1), "53.00"), ((1, 1), "68.00")]
    (outline,) = ax.patches
    assert outline.get_xy() == (0.5, -0.5)  # row 0.1, column 1: the best mean, 70
    words = "STS12-16 mean of the weighted-mean Spearman x 100"
    assert ax.get_title().replace("\n", " ") == words and bar.get_ylabel().replace("\n", " ") == words


def test_a_wide_table_is_scaled_to_the_text_width() -> None:
    import pandas as pd

    from harness.report.parts.runs_table import runs_latex

    columns = {f"T{i}": f"m{i}" for i in range(11)}
    frame = pd.DataFrame({"variant": ["a"], **{m: [1.0] for m in columns.values()}})
    latex = runs_latex(frame, _table(label="{variant}", columns=columns))
    assert "\\resizebox{\\linewidth}{!}{\\begin{tabular}" in latex and "\\end{tabular}}" in latex
    narrow = runs_latex(frame, _table(label="{variant}", columns={"T0": "m0"}))
    # a narrower table is scaled only when LaTeX finds it wider than the text (long row labels)
    assert "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}" in narrow
    assert escape_latex("reports/<study>.yaml") == r"reports/\textless{}study\textgreater{}.yaml"


def test_the_papers_spread_for_one_setup_is_a_range_row_and_a_caption_sentence() -> None:
    """Issue 22 item 8: Chen's baseline is 0.540 (Table 2), 0.539 (Table 3) and 0.540 (Table 6): the range
    row shows 0.539--0.540 under it, and the caption lists where each value comes from."""
    import pandas as pd

    from harness.report.parts.runs_table import RunsTable, runs_latex

    frame = pd.DataFrame(
        {"variant": ["baseline", "nli"], "dev.overall": [0.55, 0.6], "dev.sst.acc": [0.5, 0.4]}
    )
    spec = RunsTable(name="t", kind="runs", label="{variant}", digits=3,
                     columns={"Overall": "dev.overall", "SST": "dev.sst.acc"},
                     reference={"baseline": {"Overall": 0.540, "SST": 0.490}, "nli": {"Overall": 0.661}},
                     reference_source="Chen Table 2",
                     same_setup={"baseline": {"Chen Table 3": {"Overall": 0.539, "SST": 0.514},
                                              "Chen Table 6": {"Overall": 0.540}}})  # fmt: skip
    latex = runs_latex(frame, spec)
    lines = [line for line in latex.splitlines() if "&" in line]
    spread = [line for line in lines if "range" in line]
    assert spread == [r"\quad paper's range, same setup & 0.539--0.540 & 0.490--0.514 \\"]  # under baseline
    assert lines.index(spread[0]) < next(i for i, line in enumerate(lines) if line.startswith("nli"))
    assert "Overall 0.539, SST 0.514 (Chen Table 3)" in latex and "Overall 0.540 (Chen Table 6)" in latex
    with pytest.raises(ValueError, match="no reference row"):
        RunsTable(name="t", kind="runs", label="{variant}", columns={"Overall": "dev.overall"},
                  same_setup={"nli": {"Chen Table 5": {"Overall": 0.664}}})  # fmt: skip


def test_bold_marks_only_a_best_the_paired_comparison_decided() -> None:
    """Issue 58 item 5: the best of a column is bold only where its paired difference with the runner-up
    holds (decided True), "=" where not (a tie), and unmarked where nothing could be compared (no item
    record: the caption names the column); a derived row is never marked; over a whole grid, one cell."""
    import pandas as pd

    from harness.report.parts.runs_table import runs_summary
    from harness.report.table_stats import TableStats
    from harness.report.tables import render_summary

    frame = pd.DataFrame({"variant": ["cos", "lin"], "a": [0.6, 0.5], "b": [0.2, 0.4], "c": [0.1, 0.3]})
    spec = _table(label="{variant}", columns={"A": "a", "B": "b", "C_dev": "c"}, rows=["cos", "lin"],
                  derived_rows={"Difference": {"op": "difference", "of": ["cos", "lin"]}})  # fmt: skip
    mean, std, count = runs_summary(frame, spec)
    stats = TableStats(decided={"A": True, "B": False}, undecided=["C_dev"])
    latex = render_summary(mean, std, count, spec, stats=stats)
    rows = _cells(latex)
    assert rows[1] == ["cos", r"\textbf{0.60}", "0.20", "0.10"]
    assert rows[2] == ["lin", "0.50", "0.40$^{=}$", "0.30"]
    assert rows[3] == ["Difference", "0.10", "-0.20", "-0.20"]  # larger than a run's, never marked
    assert r"No bold in C\_dev: no item record" in latex and "(a tie)" in latex
    whole = _cells(
        render_summary(mean, std, count, spec, best_overall=True, stats=TableStats(decided={"*": True}))
    )
    assert [cell for row in whole[1:] for cell in row[1:] if "textbf" in cell] == [r"\textbf{0.60}"]
