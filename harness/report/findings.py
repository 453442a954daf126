"""What a study's statistics found, for the places a researcher looks: the report's Claims table, the
book's one-page summary per paper (claims holding / reversed / inconclusive, paper cells reproduced),
the parent MLflow run (`claims.json`, metrics `claims/holds`, `claims/reversed`, `claims/inconclusive`,
`claims/not_run`) and the terminal's closing lines."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from harness.report.claims_table import claims_latex, p_text, sized
from harness.report.table_stats import ABOVE, BELOW, INSIDE
from harness.report.tables import escape_latex
from harness.report.verdicts import NOT_RUN, PARTIAL, Verdict, as_json, counts, judge_claims
from harness.stats.equivalence import Margins

if TYPE_CHECKING:
    from harness.report.evidence import Evidence
    from harness.report.setting import Setting
    from harness.report.spec import ReportSpec
    from harness.tracking.tracker import Tracker

ARTIFACT = "claims.json"
EQUIVALENT = "equivalent"  # paper cells the harness reproduces within the margin (TOST)


@dataclass
class StudyFindings:
    study: str
    paper: str
    verdicts: list[Verdict] = field(default_factory=list)
    at_setting: bool = False
    setting_note: str = ""  # how the runs differ from the paper's setting ('' at it)
    reproduced: Counter = field(default_factory=Counter)  # inside / above / below: the paper's cells
    resamples: int = 0
    parent_run_id: str = ""
    margins: Margins = field(default_factory=Margins)

    @classmethod
    def of(
        cls,
        study: str,
        spec: ReportSpec,
        frame: pd.DataFrame,
        evidence: Evidence,
        setting: Setting | None,
        configurations: list[dict] | None = None,
    ) -> StudyFindings:
        """Judge the spec's claims (`configurations`: the paper profile's, its grid) and count the
        reproduced cells the tables found: where each paper value lies, and how many are equivalent."""
        # a study without a paper profile (a researcher's own) has no other setting to be judged against
        at_setting = setting is None or setting.matches
        note = "" if at_setting else setting.differences  # type: ignore[union-attr]
        verdicts = (
            judge_claims(spec.claims, frame, evidence, at_setting, spec.tables, configurations)
            if spec.claims
            else []
        )
        cells = Counter(where for table in evidence.reproduced.values() for where in table.values())
        cells[EQUIVALENT] = sum(sum(table.values()) for table in evidence.equivalent.values())
        return cls(study, spec.paper, verdicts, at_setting, note, cells, evidence.resampler.resamples,
                   margins=evidence.margins)  # fmt: skip

    def counts(self) -> dict[str, int]:
        return counts(self.verdicts)

    def latex(self) -> str:
        return claims_latex(self.verdicts, self.setting_note, self.resamples, self.study, self.margins)

    def json(self) -> str:
        payload = {"study": self.study, "at_paper_setting": self.at_setting, "setting": self.setting_note,
                   "resamples": self.resamples, "counts": self.counts(), "claims": as_json(self.verdicts),
                   "paper_cells": dict(self.reproduced)}  # fmt: skip
        return json.dumps(payload, indent=2)

    def lines(self) -> list[str]:
        """The terminal's lines: the tally, then one line per judged claim."""
        if not self.verdicts:
            return []
        tally = self.counts()
        where = "at the paper's setting" if self.at_setting else "NOT at the paper's setting"
        out = [f"claims ({where}): {tally['holds']} hold, {tally[PARTIAL]} hold on part of the grid, "
               f"{tally['reversed']} reversed, {tally['inconclusive']} inconclusive, "
               f"{tally['not run']} not run"]  # fmt: skip
        for v in self.verdicts:
            if v.verdict == NOT_RUN:
                continue
            paper = "" if v.paper_difference is None else f", paper {v.paper_difference:+.2f}: {sized(v)}"
            paper += f"; the paper's numbers: {v.paper_says}" if v.paper_says not in ("", "--") else ""
            out.append(f"  {v.id}: {v.shown} ({v.metric} {v.difference:+.2f} [{v.low:+.2f}, {v.high:+.2f}]"
                       f"{paper}; Holm p {p_text(v.p_holm, self.resamples)}; {v.covers})")  # fmt: skip
        unrun = [v.id for v in self.verdicts if v.verdict == NOT_RUN]
        if unrun:
            shown = ", ".join(unrun[:4]) + (f" and {len(unrun) - 4} more" if len(unrun) > 4 else "")
            out.append(
                f"  not run (this profile lacks their rows or metrics; claims.tex says which): {shown}"
            )
        return out


def log_findings(tracker: Tracker, findings: StudyFindings) -> None:
    """The verdicts on the study's parent run: `claims.json`, the tally as `claims.*` metrics, and
    whether they are at the paper's setting as a tag."""
    if not findings.verdicts or not findings.parent_run_id:
        return
    run = tracker.run(findings.parent_run_id)
    run.log_text(findings.json(), ARTIFACT)
    run.log_metrics({f"claims.{k.replace(' ', '_')}": v for k, v in findings.counts().items()})
    run.set_tag("claims.at_paper_setting", str(findings.at_setting).lower())


def summary_page(paper: str, findings: list[StudyFindings]) -> str:
    """A paper's one-page summary: per study, its claims' verdicts (at the paper's setting or not, never
    mixed) and the paper's cells inside the harness's intervals and reproduced within the margin (TOST)."""
    mine = [f for f in findings if f.paper == paper]
    if not mine:
        return ""
    rows = []
    for f in mine:
        tally = f.counts()
        setting = "paper" if f.at_setting else "not the paper's"
        compared = sum(f.reproduced[w] for w in (INSIDE, ABOVE, BELOW))
        cells = (
            f"{f.reproduced[INSIDE]} / {f.reproduced[EQUIVALENT]} of {compared}"
            if f.at_setting and compared
            else "--"
        )
        numbers = " & ".join(str(tally[k]) for k in ("holds", PARTIAL, "reversed", "inconclusive", "not run"))
        rows.append(f"\\texttt{{{escape_latex(f.study)}}} & {setting} & {numbers} & {cells} \\\\")
    at = [f for f in mine if f.at_setting]
    total: Counter[str] = Counter()
    for f in at:
        total.update(f.counts())
    inside = sum(f.reproduced[INSIDE] for f in at)
    equivalent = sum(f.reproduced[EQUIVALENT] for f in at)
    compared = sum(f.reproduced[w] for f in at for w in (INSIDE, ABOVE, BELOW))
    margins = "; ".join(sorted({f.margins.stated("$\\pm$") for f in mine}))
    headline = (
        f"At the paper's setting: {total['holds']} claims hold, {total[PARTIAL]} hold on part of the grid, "
        f"{total['reversed']} reversed, {total['inconclusive']} inconclusive; of {compared} paper cells, "
        f"{inside} inside the harness's 95\\% interval and {equivalent} reproduced (equivalent within "
        f"{margins}, TOST)."
        if at
        else "No study of this paper has runs at the paper's setting yet: the verdicts below are on other "
        "models or budgets (smoke profiles) and are not counted as reproductions."
    )
    return (
        "\\subsection*{Summary: which claims hold}\n"
        f"{headline} Verdicts: paired bootstrap differences with Holm's correction within each study (each "
        "study is its own family: these tallies add verdicts of separate families, so their error rates add "
        "too); a study's Claims table gives each claim's numbers (docs/statistics.md). Paper cells: inside "
        "the interval / reproduced (TOST) of those compared.\n\n"
        "\\begin{table}[H]\\centering\\small\n\\begin{tabular}{@{}llrrrrrr@{}}\n\\toprule\n"
        "study & setting & hold & hold (part of grid) & reversed & inconclusive & not run "
        "& paper cells \\\\\n"
        "\\midrule\n" + "\n".join(rows) + "\n\\bottomrule\n\\end{tabular}\n\\end{table}\n"
    )
