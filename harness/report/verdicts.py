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
verdicts at the paper's setting."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import BestClaim, CompareClaim, cells, is_best_cell, row_runs
from harness.report.evidence import Evidence
from harness.stats.compare import HOLDS, INCONCLUSIVE, REVERSED, Difference, best_share, judge

NOT_RUN = "not run"


@dataclass
class Verdict:
    """One claim's verdict and the numbers beside it (JSON: the parent run's `claims.json`)."""

    id: str
    source: str
    text: str
    metric: str
    kind: str
    verdict: str
    at_setting: bool
    covers: str = ""  # what the interval covers: "items only, 1 seed" / "seeds and items (3 seeds)"
    paper_difference: float | None = None
    paper_value: float | None = None  # best-of-grid: the paper's value of the claimed cell
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    p_holm: float | None = None
    share_best: float | None = None  # best-of-grid: the share of resamples where the claimed cell tops
    cells: int | None = None  # best-of-grid: the cells compared
    note: str = ""
    comparisons: list[Difference] = field(default_factory=list, repr=False)


def _observed(frame: pd.DataFrame, runs: pd.DataFrame, metric: str) -> float | None:
    values = runs[metric] if metric in runs.columns else pd.Series(dtype=float)
    return None if values.isna().any() or values.empty else float(values.mean())


def shown(rows: dict) -> str:
    """A row's params as people write them: `lambda = 0.7, tau = 1.0`."""
    return ", ".join(f"{param} = {value}" for param, value in rows.items())


def _unlogged(frame: pd.DataFrame, metric: str, verdict: Verdict) -> bool:
    """Whether the runs lack the claim's metric (their profile does not evaluate it), said in its note."""
    if metric in frame.columns and frame[metric].notna().any():
        return False
    verdict.note = f"the runs do not log {metric}: their profile does not evaluate it"
    return True


def _compare(claim: CompareClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    if _unlogged(frame, claim.metric, verdict):
        return
    better, worse = (row_runs(frame, rows, f"claim {claim.id}") for rows in (claim.better, claim.worse))
    missing = [name for name, runs in (("better", better), ("worse", worse)) if runs.empty]
    if missing:
        verdict.note = f"no run has {' or '.join(f'{n} ({shown(getattr(claim, n))})' for n in missing)}"
        return
    values = [evidence.resampled(list(r.run_id), [claim.metric]).get(claim.metric) for r in (better, worse)]
    observed = [_observed(frame, r, claim.metric) for r in (better, worse)]
    if any(v is None for v in values) or any(o is None for o in observed):
        verdict.note = f"the runs have no item record for {claim.metric}"
        return
    difference = Difference.of(observed[0] - observed[1], values[0] - values[1])  # type: ignore[operator]
    verdict.comparisons = [difference]
    verdict.covers = evidence.covers(list(better.run_id))
    verdict.difference, verdict.low, verdict.high = difference.observed, difference.low, difference.high


def _best(claim: BestClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    if _unlogged(frame, claim.metric, verdict):
        return
    grid = cells(frame, claim)
    claimed = [key for key in grid if is_best_cell(key, claim)]
    if not claimed or len(grid) < 2:
        verdict.note = f"the runs have {len(grid)} cell(s) of {shown(claim.among) or 'the grid'}, " + (
            "not the claimed one" if not claimed else "nothing to compare with"
        )
        return
    keys = [claimed[0], *(k for k in grid if k != claimed[0])]
    values = [evidence.resampled(list(grid[k].run_id), [claim.metric]).get(claim.metric) for k in keys]
    observed = [_observed(frame, grid[k], claim.metric) for k in keys]
    if any(v is None for v in values) or any(o is None for o in observed):
        verdict.note = f"the runs have no item record for {claim.metric}"
        return
    verdict.comparisons = [Difference.of(observed[0] - o, values[0] - v)  # type: ignore[operator]
                           for o, v in zip(observed[1:], values[1:], strict=True)]  # fmt: skip
    verdict.share_best = best_share(np.stack(values), 0)  # type: ignore[arg-type]
    verdict.cells, verdict.covers = len(keys), evidence.covers(list(grid[keys[0]].run_id))
    closest = min(verdict.comparisons, key=lambda d: d.observed)  # the runner-up's margin
    verdict.difference, verdict.low, verdict.high = closest.observed, closest.low, closest.high


def judge_claims(
    claims: list[CompareClaim | BestClaim], frame: pd.DataFrame, evidence: Evidence, at_setting: bool
) -> list[Verdict]:
    """Every claim's verdict, Holm's correction over all their comparisons."""
    verdicts = []
    for claim in claims:
        verdict = Verdict(claim.id, claim.source, claim.text, claim.metric, claim.kind, NOT_RUN, at_setting,
                          paper_difference=claim.paper_difference,
                          paper_value=claim.paper if isinstance(claim, BestClaim) else None)  # fmt: skip
        try:
            (_compare if isinstance(claim, CompareClaim) else _best)(claim, frame, evidence, verdict)  # type: ignore[arg-type]
        except HarnessError as exc:  # e.g. rows matching several configurations: this claim, not the report
            verdict.note, verdict.comparisons = f"not judged: {exc}", []
        verdicts.append(verdict)
    family = [d for v in verdicts for d in v.comparisons]
    outcomes, adjusted = judge(family) if family else ([], [])
    at = 0
    for verdict in verdicts:
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
    return verdicts


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    """How many claims hold, are reversed, inconclusive, not run."""
    return {
        name: sum(v.verdict == name for v in verdicts) for name in (HOLDS, REVERSED, INCONCLUSIVE, NOT_RUN)
    }


def as_json(verdicts: list[Verdict]) -> list[dict]:
    return [{k: v for k, v in asdict(verdict).items() if k != "comparisons"} for verdict in verdicts]
