"""The Claims table of a study's report (paste-ready LaTeX): each transcribed claim, the paper's
difference, the harness's paired difference with its 95% interval, Holm's p and the verdict."""

from __future__ import annotations

from harness.report.tables import escape_latex, latex_label
from harness.report.verdicts import Verdict, counts

HEADER = (
    "Claim & Metric & Paper $\\Delta$ & Harness $\\Delta$ [95\\% interval] & $p_\\mathrm{Holm}$ & Verdict"
)


def _number(value: float | None, digits: int = 2, sign: bool = True) -> str:
    return "--" if value is None else f"{value:{'+' if sign else ''}.{digits}f}"


def _row(v: Verdict) -> str:
    claim = f"\\textbf{{{escape_latex(v.id)}}} ({escape_latex(v.source)}): {latex_label(v.text)}"
    if v.kind == "best":
        claim += " \\emph{[best of a grid: margin over the runner-up"
        claim += (
            f"; best in {100 * v.share_best:.0f}\\% of resamples]}}" if v.share_best is not None else "]}"
        )
    if v.verdict == "not run":
        harness = f"\\emph{{{escape_latex(v.note)}}}"
    else:
        harness = f"{_number(v.difference)} [{_number(v.low)}, {_number(v.high)}]"
    p = "--" if v.p_holm is None else f"{v.p_holm:.3f}"
    verdict = v.verdict if v.at_setting or v.verdict == "not run" else f"{v.verdict}$^*$"
    paper = (
        f"best {v.paper_value:g}"
        if v.kind == "best" and v.paper_value is not None
        else _number(v.paper_difference)
    )
    cells = [claim, escape_latex(v.metric), paper, harness, p, f"\\textbf{{{verdict}}}"]
    return " & ".join(cells) + " \\\\"


def claims_latex(verdicts: list[Verdict], setting_note: str, resamples: int, study: str = "") -> str:
    """The table; `setting_note` is '' at the paper's setting, else how the runs differ from it."""
    tally = counts(verdicts)
    covers = sorted({v.covers for v in verdicts if v.covers})
    caption = (
        f"The paper's claims, judged on these runs: {tally['holds']} hold, {tally['reversed']} reversed, "
        f"{tally['inconclusive']} inconclusive, {tally['not run']} not run. Harness $\\Delta$: the paired "
        f"difference (claimed better - worse) with its 95\\% percentile-bootstrap interval (B = {resamples}; "
        f"{escape_latex('; '.join(covers)) or 'no interval'}); $p$: bootstrap p-value after Holm's "
        "correction over the study's comparisons. holds / reversed: the difference is beyond 0 in / against "
        "the claimed direction (Holm, 0.05); inconclusive: not. docs/statistics.md."
    )
    if setting_note:
        caption += (
            f" $^*$ Not at the paper's setting ({escape_latex(setting_note)}): these verdicts are on "
            "another model or budget and say nothing yet on the paper's own runs."
        )
    judged = [v for v in verdicts if v.verdict != "not run"]  # the judged first, then what did not run
    rows = "\n".join(_row(v) for v in [*judged, *(v for v in verdicts if v.verdict == "not run")])
    ragged = ">{\\raggedright\\arraybackslash}p"
    columns = f"@{{}}{ragged}{{0.36\\linewidth}}{ragged}{{0.11\\linewidth}}r{ragged}{{0.2\\linewidth}}rl@{{}}"
    head = f"\\toprule\n{HEADER} \\\\\n\\midrule\n"
    return (  # a longtable: a paper's many claims break across pages, the header repeated
        f"{{\\footnotesize\n\\begin{{longtable}}{{{columns}}}\n\\caption{{{caption}}}\\label{{tab:claims-{study}}}\\\\\n"
        f"{head}\\endfirsthead\n{head}\\endhead\n{rows}\n\\bottomrule\n\\end{{longtable}}}}\n"
    )
