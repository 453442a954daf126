"""Every claim of one paper on its book page: what the paper's own tables say of it (as worded), the
harness's verdict where its study has runs, and the paper's claims that no table decides, with why. A
claim of a study not run yet is listed all the same: the paper's numbers need no run."""

from __future__ import annotations

from collections.abc import Iterable

from harness.report.findings import StudyFindings
from harness.report.paper_support import paper_says
from harness.report.paper_values import paper_rows
from harness.report.spec import ReportSpec
from harness.report.tables import escape_latex, latex_label


def _verdicts(findings: Iterable[StudyFindings]) -> dict[tuple[str, str], str]:
    """(study, claim id) -> the verdict shown, starred when not at the paper's setting."""
    return {(f.study, v.id): v.shown + ("" if v.at_setting or v.verdict == "not run" else "*")
            for f in findings for v in f.verdicts}  # fmt: skip


def claims_list(paper: str, specs: dict[str, ReportSpec], findings: list[StudyFindings]) -> str:
    """The paper's claims, study by study, then its undecidable ones (LaTeX; '' for a paper without)."""
    mine = {study: spec for study, spec in specs.items() if spec.paper == paper}
    verdicts = _verdicts(findings)
    rows, tally = [], {"supports": 0, "partly": 0, "contradicts": 0, "tie": 0, "--": 0}
    for study, spec in mine.items():
        for claim in spec.claims:
            says, note = paper_says(claim, paper_rows(spec.tables, claim.metric), spec.margins())
            tally[says] += 1
            verdict = verdicts.get((study, claim.id), "study not run")
            says_text = escape_latex(says) + (f" ({escape_latex(note)})" if note else "")
            breakable = escape_latex(claim.id).replace("\\_", "\\_\\allowbreak{}")
            named = f"{breakable} (\\texttt{{{escape_latex(study)}}})"
            rows.append(
                f"{named} & {escape_latex(claim.source)} & {says_text} & {escape_latex(verdict)} \\\\"
            )
    undecidable = [u for spec in mine.values() for u in spec.undecidable]
    if not rows and not undecidable:
        return ""
    out = (
        "\\subsection*{Every claim}\n"
        f"{len(rows)} claims encoded: the paper's own numbers support {tally['supports']}, support "
        f"{tally['partly']} partly, contradict {tally['contradicts']}, tie {tally['tie']} "
        "(harness/report/paper\\_support.py); the harness's verdict beside each ($*$: not at the paper's "
        "setting). "
        f"{len(undecidable)} more its tables cannot decide, listed below.\n\n"
        "{\\scriptsize\n\\begin{longtable}{@{}>{\\raggedright\\arraybackslash}p{0.3\\linewidth}"
        ">{\\raggedright\\arraybackslash}p{0.18\\linewidth}>{\\raggedright\\arraybackslash}p{0.27\\linewidth}"
        ">{\\raggedright\\arraybackslash}p{0.17\\linewidth}@{}}\n\\toprule\n"
        "Claim (study) & Source & The paper's numbers & Harness verdict \\\\\n\\midrule\n\\endhead\n"
        + "\n".join(rows)
        + "\n\\bottomrule\n\\end{longtable}}\n"
    )
    if undecidable:
        items = "\n".join(
            f"\\item {escape_latex(u.source)}: ``{latex_label(u.text)}'' --- {escape_latex(u.why)}"
            for u in undecidable
        )
        out += "\\paragraph{Not decidable by the paper's tables.}\n"
        out += f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}\n"
    return out + "\\clearpage\n"
