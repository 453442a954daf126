"""Verdicts on a study's claims (harness.report.claim_spec) from its runs' item records
(docs/statistics.md):

- a comparison "better beats worse on metric": the paired difference better - worse over the same
  resamples (items; seeds then items where the rows have several seeds), its 95% interval and bootstrap
  p-value;
- "best of a grid": the claimed cell against every other cell, each a paired difference, and the share of
  resamples in which the claimed cell scores highest;
- Holm's correction over the study's family: every comparison of every judged claim. A comparison holds
  when rejected with a positive difference and is reversed when rejected with a negative one; a best-of-grid
  claim holds when every one of its comparisons holds, is reversed when another cell beats the claimed one
  (a comparison reversed), and is inconclusive otherwise.

Claims whose rows the runs lack (a smoke profile's smaller grid) are `not run`; claims on runs not at the
paper's setting are judged all the same and labelled so (`at_setting` false), never counted with
verdicts at the paper's setting. A best-of-grid claim whose runs hold fewer cells than the paper's grid
(the study's paper profile) never plainly holds: it `holds on part of the grid` (n of N cells).

Beside the direction, each judged claim's size (harness.stats.equivalence): where the paper's difference
for the same pair (a best-of-grid claim: the claimed cell against the harness's runner-up, the paper's
values read from the spec's reference blocks, harness.report.paper_values) lies against the harness's
interval, and whether the harness's difference is equivalent to the paper's within the report's stated
margin (TOST: "reproduced"). A best-of-grid claim also carries the paper's own margin over its runner-up
in the paper's whole grid."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict

import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_kinds import AnyClaim, judge_one
from harness.report.claim_spec import BestClaim
from harness.report.evidence import Evidence
from harness.report.paper_support import paper_says
from harness.report.paper_values import paper_rows
from harness.report.verdict_record import NOT_RUN, PARTIAL, Verdict
from harness.stats.compare import HOLDS, INCONCLUSIVE, REVERSED, judge
from harness.stats.equivalence import Equivalence, size

__all__ = ["NOT_RUN", "PARTIAL", "Verdict", "as_json", "counts", "judge_claims"]


def _size(verdict: Verdict, margin: float) -> None:
    """The judged claim's size against the paper's difference for the same pair, and its TOST."""
    if verdict.paper_difference is None or verdict.resampled is None or verdict.low is None:
        return
    verdict.size = size(verdict.paper_difference, verdict.low, verdict.high)  # type: ignore[arg-type]
    tost = Equivalence.of(verdict.resampled, verdict.paper_difference, margin)
    verdict.margin, verdict.p_tost, verdict.reproduced = margin, tost.p, tost.equivalent


def judge_claims(
    claims: list[AnyClaim],
    frame: pd.DataFrame,
    evidence: Evidence,
    at_setting: bool,
    tables: Iterable[object] | None = None,
    configurations: list[dict] | None = None,
) -> list[Verdict]:
    """Every claim's verdict, Holm's correction over all their comparisons, and each one's size against
    the paper's (`tables`: the report's table parts, whose reference blocks give the paper's cells;
    `configurations`: the paper profile's, whose grid a best-of-grid claim is counted against)."""
    verdicts, rows = [], {}
    for claim in claims:
        verdict = Verdict(claim.id, claim.source, claim.text, claim.metric, claim.kind, NOT_RUN, at_setting,
                          paper_difference=claim.paper_difference,
                          paper_value=claim.paper if isinstance(claim, BestClaim) else None)  # fmt: skip
        if claim.metric not in rows:
            rows[claim.metric] = paper_rows(tables or [], claim.metric)
        verdict.paper_says, verdict.paper_note = paper_says(claim, rows[claim.metric], evidence.margins)
        try:
            judge_one(claim, frame, evidence, verdict, rows[claim.metric], configurations)
        except HarnessError as exc:  # e.g. rows matching several configurations: this claim, not the report
            verdict.note, verdict.comparisons = f"not judged: {exc}", []
        verdicts.append(verdict)
    family = [d for v in verdicts for d in v.comparisons]
    outcomes, adjusted = judge(family) if family else ([], [])
    at = 0
    for verdict in verdicts:
        if verdict.kind == "equivalent":  # its own test (TOST against 0), not in the directional family
            if verdict.paper_difference is not None and verdict.low is not None:
                verdict.size = size(verdict.paper_difference, verdict.low, verdict.high)  # type: ignore[arg-type]
            continue
        if not verdict.comparisons:
            continue
        mine = outcomes[at : at + len(verdict.comparisons)]
        p = adjusted[at : at + len(verdict.comparisons)]
        at += len(verdict.comparisons)
        verdict.verdict = (
            REVERSED if REVERSED in mine else HOLDS if all(o == HOLDS for o in mine) else INCONCLUSIVE
        )
        # holds needs every comparison (the largest p); reversed needs one (the smallest reversed p)
        reversed_p = [q for q, o in zip(p, mine, strict=True) if o == REVERSED]
        verdict.p_holm = min(reversed_p) if reversed_p else max(p)
        if verdict.verdict == HOLDS and (verdict.grid_cells or 0) > (verdict.cells or 0):
            verdict.verdict = PARTIAL  # another cell of the paper's grid, not run, may beat it
        _size(verdict, evidence.margins.of(verdict.metric))
    return verdicts


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    """How many claims hold, are reversed, inconclusive, not run."""
    names = (HOLDS, PARTIAL, REVERSED, INCONCLUSIVE, NOT_RUN)
    return {name: sum(v.verdict == name for v in verdicts) for name in names}


def as_json(verdicts: list[Verdict]) -> list[dict]:
    return [{k: v for k, v in asdict(verdict).items() if k not in ("comparisons", "resampled")}
            for verdict in verdicts]  # fmt: skip
