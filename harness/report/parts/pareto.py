"""`kind: pareto` (a figure) and `kind: pareto_table` (a table): the configurations of a multi-objective
study on two of its objectives, and its Pareto front: the configurations no other is at least as good as on
both objectives and better than on one (each in its direction). Seeds of one configuration (one label) are
averaged first, so the front is one of configurations, as a study with seeds chooses them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pandas as pd
from pydantic import Field

from harness.errors import HarnessError
from harness.report.collect import filter_runs, require_columns, row_labels
from harness.report.figures import in_words, plt, save, titled
from harness.report.parts.base import FigurePart, Filtered, PartContext, TablePart, register_part
from harness.report.tables import escape_latex, latex_label

Direction = Literal["maximize", "minimize"]
Point = tuple[float, float]
Axis = tuple[str, Direction, str]  # metric, direction, in words


class ParetoSpec(Filtered):
    """Which runs (a label per configuration) and which two objectives, each with its direction: by
    default the study's first two (its parent run's `objectives` tag), so one report spec serves profiles
    whose objectives differ."""

    label: str = Field(description="configuration label template over params, e.g. 'lambda={lambda}'")
    x: str | None = Field(None, description="the first objective's metric (default: the study's first)")
    y: str | None = Field(None, description="the second objective's metric (default: the study's second)")
    x_direction: Direction | None = Field(None, description="default: the study's, else maximize")
    y_direction: Direction | None = Field(None, description="default: the study's, else maximize")
    x_label: str = Field("", description="the first objective in words (default: from its metric's name)")
    y_label: str = Field("", description="the second objective in words")
    if TYPE_CHECKING:  # a mixin of report parts: the part's field (ReportPart), not one of its own
        name: str

    def axes(self, ctx: PartContext) -> tuple[Axis, Axis]:
        """The horizontal and the vertical objective: metric, direction, words."""
        named = [metric for metric, _ in ctx.objectives]
        x = self.x or (named[0] if named else None)
        y = self.y or (named[1] if len(named) > 1 else None)
        if x is None or y is None:
            raise HarnessError(
                f"pareto {self.name}: name x and y (metrics), or report a study with objectives"
            )
        study: dict[str, Direction] = dict(ctx.objectives)  # type: ignore[arg-type]
        x_direction = self.x_direction or study.get(x, "maximize")
        y_direction = self.y_direction or study.get(y, "maximize")
        return (x, x_direction, self.x_label or in_words(x)), (y, y_direction, self.y_label or in_words(y))


def dominates(a: Point, b: Point, directions: tuple[Direction, Direction]) -> bool:
    """Whether `a` is at least as good as `b` on both objectives and better on one."""
    signs = [1 if d == "maximize" else -1 for d in directions]
    better = [s * (p - q) for s, p, q in zip(signs, a, b, strict=True)]
    return all(v >= 0 for v in better) and any(v > 0 for v in better)


def pareto_frame(frame: pd.DataFrame, spec: ParetoSpec, axes: tuple[Axis, Axis]) -> pd.DataFrame:
    """One row per label: `x`, `y` (means over its runs), `runs`, and `front` (on the Pareto front)."""
    part = f"pareto {spec.name}"
    (x, x_direction, _), (y, y_direction, _) = axes
    frame = filter_runs(frame, spec.where, part)
    require_columns(frame, [x, y], part)
    labels = row_labels(frame, spec.label, part)
    points = pd.DataFrame({"x": frame[x].to_numpy(), "y": frame[y].to_numpy()}, index=labels).dropna()
    grouped = points.groupby(level=0, sort=False)
    table = grouped.mean().assign(runs=grouped.size())
    pairs = list(zip(table["x"], table["y"], strict=True))
    directions = (x_direction, y_direction)
    table["front"] = [not any(dominates(other, mine, directions) for other in pairs) for mine in pairs]
    return table


def _axis_label(axis: Axis) -> str:
    return f"{axis[2]} ({'higher' if axis[1] == 'maximize' else 'lower'} is better)"


@register_part("pareto")
class ParetoFigure(FigurePart, ParetoSpec):
    """Every configuration as a point, the front marked, labelled and joined in order of the first
    objective."""

    title: str = ""

    def draw(self, ctx: PartContext, path: Path) -> None:
        axes = self.axes(ctx)
        table = pareto_frame(ctx.frame, self, axes)
        fig, ax = plt.subplots(figsize=(6, 4.2))
        rest, front = table[~table["front"]], table[table["front"]].sort_values("x")
        ax.scatter(rest["x"], rest["y"], color="0.6", s=24, label="dominated")
        ax.plot(front["x"], front["y"], color="C3", marker="o", markersize=6, label="Pareto front")
        for label, row in front.iterrows():
            ax.annotate(str(label), (row["x"], row["y"]), xytext=(4, 4), textcoords="offset points", size=7)
        ax.set_xlabel(_axis_label(axes[0]))
        ax.set_ylabel(_axis_label(axes[1]))
        ax.ticklabel_format(useOffset=False)  # close scores read as they are, not as an offset
        titled(ax, self.title or f"{self.name}: {int(table['front'].sum())} of {len(table)} on the front")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, path)


@register_part("pareto_table")
class ParetoTable(TablePart, ParetoSpec):
    """The configurations on the front, best on the first objective first, with both objectives (means
    over their runs) and the number of runs. No interval: a study's objectives are dev scores, and the item
    records hold the test items only (harness.stats.items); the caption says so."""

    caption: str = ""
    digits: int = Field(2, ge=0, le=6)

    def latex(self, ctx: PartContext) -> str:
        axes = self.axes(ctx)
        (_, x_direction, x_words), (_, _, y_words) = axes
        table = pareto_frame(ctx.frame, self, axes)
        front = table[table["front"]].sort_values("x", ascending=x_direction == "minimize")
        header = f"configuration & {escape_latex(x_words)} & {escape_latex(y_words)} & runs \\\\"
        rows = [
            f"{latex_label(str(label))} & {x:.{self.digits}f} & {y:.{self.digits}f} & {runs} \\\\"
            for label, x, y, runs in front[["x", "y", "runs"]].itertuples()
        ]
        caption = self.caption or (
            f"Pareto front of {x_words} and {y_words}: {len(front)} of {len(table)} configurations no "
            "other beats on both (means over their runs: point estimates, no interval)"
        )
        return "\n".join([
            "\\begin{table}[H]", "\\centering", f"\\caption{{{escape_latex(caption)}}}",
            f"\\label{{tab:{self.name}}}", "\\begin{tabular}{lrrr}", "\\toprule", header, "\\midrule", *rows,
            "\\bottomrule", "\\end{tabular}", "\\end{table}",
        ]) + "\n"  # fmt: skip
