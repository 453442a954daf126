"""The Claims table of a study's report (paste-ready LaTeX): each transcribed claim, the paper's
difference, the harness's paired difference with its 95% interval, Holm's p, the verdict on its direction
and, apart from it, on its size against the paper's (harness.stats.equivalence)."""

from __future__ import annotations

from harness.report.tables import escape_latex, latex_label
from harness.report.verdicts import NOT_RUN, PARTIAL, Verdict, counts
from harness.stats.equivalence import Margins

HEADER = (
    "Claim & Metric & Paper $\\Delta$ & The paper's numbers & Harness $\\Delta$ [95\\% interval] & "
    "$p_\\mathrm{Holm}$ & Direction & Size against the paper"
)


def _number(value: float | None, digits: int = 2, sign: bool = True) -> str:
    return "--" if value is None else f"{value:{'+' if sign else ''}.{digits}f}"


def p_text(p: float | None, resamples: int) -> str:
    """A bootstrap p-value as printed: "< 1/B" where no resample crossed (B resamples can show no less)."""
    if p is None:
        return "--"
    return f"< 1/{resamples}" if p == 0 else f"{p:.3f}"


def share_text(share: float) -> str:
    """A share of resamples in percent, never rounded to a certainty it is not ("> 99%", "< 1%")."""
    if 0.99 < share < 1:
        return "> 99%"
    if 0 < share < 0.01:
        return "< 1%"
    return f"{100 * share:.0f}%"


def sized(v: Verdict) -> str:
    """The size verdict in words: where the paper's difference lies against the interval, and whether the
    harness's difference is equivalent to it within the margin (TOST)."""
    if not v.size:
        return "--"
    tost = "reproduced" if v.reproduced else "not shown equivalent"
    return f"{v.size}; {tost} (TOST +-{v.margin:g}, p {v.p_tost:.3f})"


def _row(v: Verdict, resamples: int) -> str:
    name = escape_latex(v.id).replace("\\_", "\\_\\allowbreak{}")  # long ids break at their underscores
    claim = f"\\textbf{{{name}}} ({escape_latex(v.source)}): {latex_label(v.text)}"
    if v.kind == "best":
        claim += " \\emph{[best of a grid: margin over the harness's runner-up"
        if v.share_best is not None:
            claim += f"; best in {escape_latex(share_text(v.share_best))} of resamples"
        claim += "]}"
    if v.kind == "trend":
        claim += " \\emph{[a trend: every step between neighbouring values; the weakest step shown]}"
    if v.verdict == NOT_RUN:
        harness = f"\\emph{{{escape_latex(v.note)}}}"
    else:
        harness = f"{_number(v.difference)} [{_number(v.low)}, {_number(v.high)}]"
    p = escape_latex(p_text(v.p_holm, resamples))
    verdict = v.shown if v.at_setting or v.verdict == NOT_RUN else f"{v.shown}$^*$"
    paper = _number(v.paper_difference)
    if v.kind == "best" and v.paper_value is not None:
        paper = f"best {v.paper_value:g}" + ("" if v.paper_difference is None else f"; pair {paper}")
        if v.paper_margin is not None:
            paper += f"; margin {_number(v.paper_margin)}"
    size = escape_latex(sized(v)).replace("+-", "$\\pm$")
    says = escape_latex(v.paper_says or "--") + (f" ({escape_latex(v.paper_note)})" if v.paper_note else "")
    cells = [claim, escape_latex(v.metric), paper, says, harness, p, f"\\textbf{{{verdict}}}", size]
    return " & ".join(cells) + " \\\\"


def claims_latex(
    verdicts: list[Verdict],
    setting_note: str,
    resamples: int,
    study: str = "",
    margins: Margins | None = None,
) -> str:
    """The table; `setting_note` is '' at the paper's setting, else how the runs differ from it."""
    tally = counts(verdicts)
    covers = sorted({v.covers for v in verdicts if v.covers})
    stated = (margins or Margins()).stated("$\\pm$")
    caption = (
        f"The paper's claims, judged on these runs: {tally['holds']} hold, {tally[PARTIAL]} "
        f"hold on part of the grid, {tally['reversed']} reversed, {tally['inconclusive']} inconclusive, "
        f"{tally['not run']} not run. Harness $\\Delta$: the paired difference (claimed better - worse; best "
        "of a grid: the claimed cell - the harness's runner-up) with its 95\\% percentile-bootstrap interval "
        f"(B = {resamples}; {escape_latex('; '.join(covers)) or 'no interval'}; unadjusted: Holm adjusts "
        "the p-values, not the intervals); $p$: bootstrap p-value after Holm's correction over the study's "
        "comparisons. Direction: holds / reversed: the difference is beyond 0 in / against the claimed "
        "direction (Holm, 0.05); inconclusive: not; holds on n of N cells: the runs hold n of the paper's N "
        "cells, so an unrun cell may still beat the claimed one. Size: where the paper's difference for the "
        "same pair (Paper $\\Delta$; best of a grid: the claimed cell - the harness's runner-up, and the "
        "paper's own margin over its runner-up) lies against the interval, and whether the harness's "
        f"difference is equivalent to it within {stated} (two one-sided tests at 0.05: "
        "reproduced). The paper's numbers: what the paper's own tables say of the claim as worded "
        "(supports / partly / contradicts / tie; harness/report/paper\\_support.py). docs/statistics.md."
    )
    if setting_note:
        caption += (
            f" $^*$ Not at the paper's setting ({escape_latex(setting_note)}): these verdicts are on "
            "another model or budget and say nothing yet on the paper's own runs."
        )
    judged = [v for v in verdicts if v.verdict != NOT_RUN]  # the judged first, then what did not run
    rows = "\n".join(_row(v, resamples) for v in [*judged, *(v for v in verdicts if v.verdict == NOT_RUN)])
    ragged = ">{\\raggedright\\arraybackslash}p"
    widths = (0.21, 0.08, 0.08, 0.08, 0.11)  # with the p column and 3pt gaps: the text width
    columns = "@{}" + "".join(f"{ragged}{{{w}\\linewidth}}" for w in widths)
    columns += f"r{ragged}{{0.08\\linewidth}}{ragged}{{0.11\\linewidth}}@{{}}"
    head = f"\\toprule\n{HEADER} \\\\\n\\midrule\n"
    return (  # a longtable: a paper's many claims break across pages, the header repeated
        f"{{\\scriptsize\\setlength{{\\tabcolsep}}{{3pt}}\n\\begin{{longtable}}{{{columns}}}\n\\caption{{{caption}}}\\label{{tab:claims-{study}}}\\\\\n"
        f"{head}\\endfirsthead\n{head}\\endhead\n{rows}\n\\bottomrule\n\\end{{longtable}}}}\n"
    )
