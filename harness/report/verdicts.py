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

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import (
    BestClaim,
    CompareClaim,
    TrendClaim,
    cells,
    claim_by,
    is_best_cell,
    row_runs,
)
from harness.report.collect import same_value
from harness.report.evidence import Evidence
from harness.report.paper_support import paper_says
from harness.report.paper_values import PaperRow, lookup, paper_grid, paper_rows, same_cell
from harness.stats.compare import HOLDS, INCONCLUSIVE, REVERSED, Difference, best_share, judge
from harness.stats.equivalence import Equivalence, size

NOT_RUN = "not run"
PARTIAL = "holds on part of the grid"


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
    grid_cells: int | None = None  # best-of-grid: the cells of the paper's grid (its paper profile)
    paper_margin: float | None = None  # best-of-grid: the paper's best minus the paper's runner-up
    size: str = ""  # where the paper's difference lies against the interval (harness.stats.equivalence)
    margin: float | None = None  # the stated equivalence margin
    p_tost: float | None = None
    reproduced: bool | None = None  # equivalent to the paper's difference within the margin (TOST)
    paper_says: str = ""  # the paper's own numbers on the claim as worded (harness.report.paper_support)
    paper_note: str = ""  # what in the paper's numbers goes against it
    note: str = ""
    comparisons: list[Difference] = field(default_factory=list, repr=False)
    resampled: np.ndarray | None = field(default=None, repr=False)  # the shown difference's resamples

    @property
    def shown(self) -> str:
        """The verdict in words: a partial grid's count of cells named."""
        if self.verdict == PARTIAL:
            return f"holds on {self.cells} of {self.grid_cells} cells"
        return self.verdict


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


def _study_frame(study: str | None, frame: pd.DataFrame, evidence: Evidence) -> pd.DataFrame:
    """The runs a row of a claim names: this study's, or another study's of the same store (its latest
    finished study run)."""
    if study is None:
        return frame
    from harness.tracking.study_runs import trial_frame

    try:
        return trial_frame(evidence.tracker, study)[0]
    except HarnessError as exc:
        raise HarnessError(f"study {study} of the same store: {exc}") from None


def _compare(claim: CompareClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    frames = [_study_frame(s, frame, evidence) for s in (claim.better_study, claim.worse_study)]
    if any(_unlogged(f, claim.metric, verdict) for f in frames):
        return
    better, worse = (row_runs(f, rows, f"claim {claim.id}")
                     for f, rows in zip(frames, (claim.better, claim.worse), strict=True))  # fmt: skip
    missing = [name for name, runs in (("better", better), ("worse", worse)) if runs.empty]
    if missing:
        verdict.note = f"no run has {' or '.join(f'{n} ({shown(getattr(claim, n))})' for n in missing)}"
        return
    values = [evidence.resampled(list(r.run_id), [claim.metric]).get(claim.metric) for r in (better, worse)]
    observed = [_observed(f, r, claim.metric) for f, r in zip(frames, (better, worse), strict=True)]
    if any(v is None for v in values) or any(o is None for o in observed):
        verdict.note = f"the runs have no item record for {claim.metric}"
        return
    verdict.resampled = values[0] - values[1]  # type: ignore[operator]
    difference = Difference.of(observed[0] - observed[1], verdict.resampled)  # type: ignore[arg-type]
    verdict.comparisons = [difference]
    verdict.covers = evidence.covers(list(better.run_id), list(worse.run_id))
    verdict.difference, verdict.low, verdict.high = difference.observed, difference.low, difference.high


def _best(claim: BestClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict,
          paper: dict[tuple, float]) -> None:  # fmt: skip
    """`paper`: the paper's cells of the claim's grid (`paper_grid`), for the pair's paper difference."""
    best = tuple(claim.best[p] for p in claim.by)
    claimed_paper = claim.paper if claim.paper is not None else lookup(paper, best)
    others = [value for cell, value in paper.items() if not same_cell(cell, best)]
    if claimed_paper is not None and others:
        verdict.paper_margin = claimed_paper - max(others)
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
    verdict.cells = len(keys)
    at = min(range(len(verdict.comparisons)), key=lambda i: verdict.comparisons[i].observed)  # runner-up
    closest, runner_up = verdict.comparisons[at], keys[at + 1]
    verdict.covers = evidence.covers(list(grid[keys[0]].run_id), list(grid[runner_up].run_id))
    verdict.difference, verdict.low, verdict.high = closest.observed, closest.low, closest.high
    verdict.resampled = values[0] - values[at + 1]  # type: ignore[operator]
    theirs = lookup(paper, runner_up)
    verdict.paper_difference = None if claimed_paper is None or theirs is None else claimed_paper - theirs


def _value_order(key: tuple) -> tuple:
    """Cells in the order of their values: numbers as numbers."""
    try:
        return tuple(float(v) for v in key)
    except (TypeError, ValueError):
        return tuple(str(v) for v in key)


def _trend(claim: TrendClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict,
           paper: dict[tuple, float]) -> None:  # fmt: skip
    """Every step between neighbouring values of `by`, later minus earlier (increasing) or the reverse;
    the shown difference is the weakest step's, beside the paper's for the same step."""
    if _unlogged(frame, claim.metric, verdict):
        return
    grid = cells(frame, claim)
    keys = sorted(grid, key=_value_order)
    if len(keys) < 2:
        verdict.note = f"the runs have {len(keys)} cell(s) of {shown(claim.among) or 'the grid'}: no step"
        return
    values = [evidence.resampled(list(grid[k].run_id), [claim.metric]).get(claim.metric) for k in keys]
    observed = [_observed(frame, grid[k], claim.metric) for k in keys]
    if any(v is None for v in values) or any(o is None for o in observed):
        verdict.note = f"the runs have no item record for {claim.metric}"
        return
    sign = 1.0 if claim.direction == "increasing" else -1.0
    steps = range(len(keys) - 1)
    verdict.comparisons = [
        Difference.of(sign * (observed[i + 1] - observed[i]), sign * (values[i + 1] - values[i]))  # type: ignore[operator]
        for i in steps
    ]
    verdict.cells = len(keys)
    at = min(steps, key=lambda i: verdict.comparisons[i].observed)
    weakest = verdict.comparisons[at]
    verdict.covers = evidence.covers(list(grid[keys[at]].run_id), list(grid[keys[at + 1]].run_id))
    verdict.difference, verdict.low, verdict.high = weakest.observed, weakest.low, weakest.high
    verdict.resampled = sign * (values[at + 1] - values[at])  # type: ignore[operator]
    ends = [lookup(paper, keys[at]), lookup(paper, keys[at + 1])]
    verdict.paper_difference = None if None in ends else sign * (ends[1] - ends[0])  # type: ignore[operator]


def _grid_size(claim: BestClaim | TrendClaim, configurations: list[dict] | None) -> int | None:
    """The cells of the claim's grid in the paper profile's configurations (None: no paper profile, or
    it runs none of the claim's rows)."""
    if not configurations:
        return None
    keys, by = set(), claim_by(claim)
    for params in configurations:
        if all(p in params for p in by) and all(
            p in params and any(same_value(params[p], w) for w in (v if isinstance(v, list) else [v]))
            for p, v in claim.among.items()
        ):
            keys.add(tuple(str(params[p]) for p in by))
    return len(keys) or None


AnyClaim = CompareClaim | BestClaim | TrendClaim


def _judge_one(claim: AnyClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict,
               rows: list[PaperRow], configurations: list[dict] | None) -> None:  # fmt: skip
    """The claim's comparisons by its kind (`rows`: the paper's rows of its metric)."""
    if isinstance(claim, CompareClaim):
        _compare(claim, frame, evidence, verdict)
        return
    verdict.grid_cells = _grid_size(claim, configurations)
    paper = paper_grid(rows, claim.among, claim_by(claim))
    (_best if isinstance(claim, BestClaim) else _trend)(claim, frame, evidence, verdict, paper)  # type: ignore[arg-type]


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
    tables: list[object] | None = None,
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
        verdict.paper_says, verdict.paper_note = paper_says(claim, rows[claim.metric])
        try:
            _judge_one(claim, frame, evidence, verdict, rows[claim.metric], configurations)
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
