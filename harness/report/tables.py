"""What the table kinds share (each kind is one file in harness/report/parts/): a summary of means rendered
as booktabs LaTeX via pandas Styler (best in bold, the paper's rows and differences, intervals and
daggers), derived rows and columns, a grid pivot (also the heatmap's), and LaTeX escaping."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

import pandas as pd
from pandas.io.formats.style import Styler

from harness.errors import HarnessError
from harness.report.collect import require_columns
from harness.report.setting import Setting
from harness.report.table_stats import TableStats, derived_vector, mark_ties, table_stats

if TYPE_CHECKING:
    from harness.report.evidence import Evidence
    from harness.report.parts.base import Derived

GREEK = {"lambda": r"$\lambda$", "tau": r"$\tau$"}  # params printed as the papers print them


class Summarised(Protocol):
    """What the shared code reads of a table kind (runs, grid)."""

    name: str
    caption: str
    digits: int
    reference: dict[str, dict[str, float]]
    reference_source: str
    baseline: str | None


def grid_frame(frame: pd.DataFrame, rows: str, columns: str, metric: str, table: str) -> pd.DataFrame:
    """metric pivoted to rows x columns (mean when a cell has several runs)."""
    require_columns(frame, [rows, columns, metric], f"table {table}")
    grid = frame.pivot_table(index=rows, columns=columns, values=metric, aggfunc="mean")
    return grid.sort_index().sort_index(axis=1)


def summary_stats(
    evidence: Evidence,
    cells: dict[tuple[str, str], tuple[list[str], str]],
    mean: pd.DataFrame,
    spec: Summarised,
    setting: Setting | None,
    mixed: list,
    best_overall: bool = False,
) -> TableStats:
    """The table's intervals, daggers against `spec.baseline`, reproduction marks (at the paper's
    setting only: elsewhere the paper's values are another model's), and which bests are ties (per
    column, or over the whole table with `best_overall`)."""
    baseline = spec.baseline if spec.baseline in mean.index else None  # a profile may not run it
    shown = [(label, column) for label in mean.index for column in mean.columns]
    comparable = setting is None or setting.matches
    reference = {(label, column): value for label, values in spec.reference.items()
                 for column, value in values.items()} if comparable else {}  # fmt: skip
    stats = table_stats(evidence, cells, derived_vector(spec), shown, baseline, reference)
    stats.missing_baseline = latex_label(spec.baseline) if spec.baseline and baseline is None else None
    stats.mixed = len(mixed)
    evidence.reproduced[spec.name] = stats.reproduced  # the book's per-paper count of reproduced cells
    evidence.equivalent[spec.name] = stats.equivalent
    mark_ties(stats, evidence, cells, mean, best_overall)
    return stats


def derive(values: pd.DataFrame, derived: Derived, axis: int) -> pd.Series:
    """`derived.op` over the named columns (axis 1) or rows (axis 0) of `values`."""
    picked = values[derived.of] if axis == 1 else values.loc[derived.of]
    if derived.op == "mean":
        return picked.mean(axis=axis, skipna=False)
    first, second = derived.of
    return picked[first] - picked[second] if axis == 1 else picked.loc[first] - picked.loc[second]


def with_derived_rows(
    mean: pd.DataFrame, std: pd.DataFrame, count: pd.Series, derived_rows: dict[str, Derived], table: str
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Append each derived row (n 0: never bold, no spread)."""
    for label, derived in derived_rows.items():
        unknown = [name for name in derived.of if name not in mean.index]
        if unknown:
            raise HarnessError(f"table {table}: derived row {label!r} uses {unknown}, which have no runs")
        mean.loc[label], std.loc[label], count.loc[label] = derive(mean, derived, axis=0), float("nan"), 0
    return mean, std, count


def render_summary(
    mean: pd.DataFrame,
    std: pd.DataFrame,
    count: pd.Series,
    spec: Summarised,
    best_overall: bool = False,
    corner: str | None = None,
    setting: Setting | None = None,
    stats: TableStats | None = None,
) -> str:
    """The LaTeX of a summary (rows x columns of means), bold best per column (or over the whole table),
    reference and difference rows under referenced labels, transposed on request. The differences are
    shown only where the runs were made at the paper's setting (`setting`, harness.report.setting);
    elsewhere the paper's rows say which model they are, and the caption says why no difference."""
    digits = spec.digits
    best = mean[count > 0].round(digits).max()
    if best_overall:
        best[:] = best.max()

    def cell(label: str, column: str) -> str:
        value = mean.at[label, column]
        text = "--" if pd.isna(value) else f"{value:.{digits}f}"
        if count[label] > 1 and not pd.isna(std.at[label, column]):
            text += f" $\\pm$ {std.at[label, column]:.{digits}f}"
        if count[label] > 0 and not pd.isna(value) and round(value, digits) == best[column]:
            mark = stats.best_mark(column) if stats is not None else ""  # bold only where a test holds
            text = f"{text}$^{{=}}$" if mark == "tie" else f"\\textbf{{{text}}}" if mark == "bold" else text
        return text + (stats.mark(label, column) if stats else "")

    def versus(label: str, column: str) -> str:
        if label == baseline or stats is None or pd.isna(mean.at[label, column]):
            return ""
        return stats.paired(label, column, mean.at[label, column] - mean.at[baseline, column], digits)

    def paper(label: str, column: str) -> str:
        value = spec.reference.get(label, {}).get(column)
        mark = stats.paper_mark(label, column) if stats else ""
        return "" if value is None else f"{value:.{digits}f}{mark}"

    def delta(label: str, column: str) -> str:
        value = spec.reference.get(label, {}).get(column)
        if value is None or pd.isna(mean.at[label, column]):
            return ""
        return f"{mean.at[label, column] - value:+.{digits}f}"

    def name(label: str) -> str:
        return latex_label(label) + (f" ($n={count[label]}$)" if count[label] > 1 else "")

    same_setup = getattr(spec, "same_setup", {})

    def spread(label: str, column: str) -> str:
        values = [v.get(column) for v in [spec.reference.get(label, {}), *same_setup.get(label, {}).values()]]
        known = [v for v in values if v is not None]
        return f"{min(known):.{digits}f}--{max(known):.{digits}f}" if len(known) > 1 else ""

    baseline = stats.baseline if stats is not None else None
    comparable = setting is None or setting.matches
    source = escape_latex(spec.reference_source)
    if not comparable:
        source += f" ({escape_latex(setting.paper_model)})"  # type: ignore[union-attr]
    rows: list[tuple[str, list[str]]] = []
    transpose = getattr(spec, "transpose", False)
    outer, inner = (
        (list(mean.columns), list(mean.index)) if transpose else (list(mean.index), list(mean.columns))
    )
    for key in outer:

        def at(fn, key=key):  # noqa: ANN001, ANN202 - (label, column) in either layout
            return [fn(other, key) if transpose else fn(key, other) for other in inner]

        rows.append((escape_latex(key) if transpose else name(key), at(cell)))
        if stats is not None and stats.intervals:
            rows.append(("\\quad 95\\% interval", at(lambda label, column: stats.ci(label, column, digits))))
        if baseline is not None and not transpose and key != baseline and count[key] > 0:
            rows.append((f"\\quad $-$ {latex_label(baseline)} (paired)", at(versus)))
        labels = inner if transpose else [key]
        if any(spec.reference.get(label) for label in labels):
            rows.append((f"\\quad {source}", at(paper)))
            if comparable:
                rows.append(("\\quad $\\Delta$", at(delta)))
            if any(same_setup.get(label) for label in labels):
                rows.append(("\\quad paper's range, same setup", at(spread)))
    headers = [name(label) for label in inner] if transpose else [escape_latex(c) for c in inner]
    caption = spec.caption + same_setup_note(spec.reference, same_setup, spec.reference_source, digits)
    if stats is not None:
        caption += stats.caption(latex_label(spec.baseline or ""))
        undecided = [escape_latex(c) if c != "*" else "the table" for c in stats.undecided]
        if undecided:
            caption += f" No bold in {', '.join(undecided)}: no item record to compare the best with."
    if spec.reference and not comparable:
        caption += (
            f" The paper's rows are {escape_latex(setting.paper_model)} at the paper's setting; these runs "  # type: ignore[union-attr]
            "are not (see the notes), so no difference is shown."
        )
    shown = pd.DataFrame([[label, *cells] for label, cells in rows], columns=[corner or "", *headers])
    return _booktabs(shown.style.hide(axis="index"), spec.name, caption, labelled=True)


def same_setup_note(
    reference: dict[str, dict[str, float]],
    same_setup: dict[str, dict[str, dict[str, float]]],
    source: str,
    digits: int,
) -> str:
    """The caption's sentence on the paper's own spread: each row's values wherever the paper reports the
    same configuration (Chen's baseline is 0.539, 0.540 and 0.540 in three tables)."""
    if not same_setup:
        return ""
    parts = []
    for label, elsewhere in same_setup.items():
        listed = [(source, reference[label])] + list(elsewhere.items())
        shown = "; ".join(
            f"{', '.join(f'{c} {v:.{digits}f}' for c, v in values.items())} ({where})"
            for where, values in listed
        )
        parts.append(f"{latex_label(label)}: {escape_latex(shown)}")
    return (
        " The paper reports the same setup more than once, with different values: "
        + "; ".join(parts)
        + ". The range row is this spread; the paper does not say why the values differ (inferred: another"
        " run of the same configuration), so a difference harness - paper inside it is within the paper's own"
        " variation."
    )


WIDE = 8  # tables with more columns are scaled to the text width


def _booktabs(styler: Styler, name: str, caption: str, labelled: bool = False) -> str:
    """A centred booktabs table, placed where it is written ([H]), numbers right-aligned; a wide one
    (SupCL-Seq Table 2's eleven GLUE columns) scaled to the text width. `labelled`: the first column
    holds the row labels (the index hidden, so labels need not be unique)."""
    numbers = styler.data.shape[1] - (1 if labelled else 0)
    latex = styler.to_latex(
        hrules=True,
        caption=caption or None,
        label=f"tab:{name}",
        position="H",
        position_float="centering",
        column_format="l" + "r" * numbers,
    )
    width = "\\linewidth" if numbers > WIDE else "\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi"
    latex = latex.replace("\\begin{tabular}", f"\\resizebox{{{width}}}{{!}}{{\\begin{{tabular}}", 1)
    latex = latex.replace("\\end{tabular}", "\\end{tabular}}", 1)  # narrower tables: only when too wide
    return latex


LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    **{char: "\\" + char for char in "&%$#_{}"},
    "<": r"\textless{}", ">": r"\textgreater{}",
    "[": "{[}", "]": "{]}",  # a row starting with [ after \\ would be read as the line break's spacing
}  # fmt: skip


def latex_label(text: str) -> str:
    """A row label for a paper's table: plain text escaped, with `lambda = 0.1` and `tau = 1.0` as the
    Greek letters in math mode (a name such as `lambda_x` stays as it is)."""
    escaped = escape_latex(text)
    return re.sub(r"(?<![\w\\])(lambda|tau)(?= =)", lambda m: GREEK[m.group(1)], escaped)


def escape_latex(text: str) -> str:
    """Plain text for LaTeX (table labels and headers, the report's title): the characters pandas
    Styler's `escape="latex"` escapes; the one escaper of the report."""
    escaped = "".join(LATEX_SPECIALS.get(char, char) for char in str(text))
    return escaped.replace("--", "-{}-").replace("--", "-{}-")  # no en / em dash ligatures (--retry-failed)
