"""How each kind of claim (harness.report.claim_spec) becomes paired comparisons of its runs, filling its
`Verdict` (harness.report.verdicts then judges them together: Holm's family, partial grids, size):
"A beats B", the best of a grid, a trend (every step), a larger gain (one pair's difference beyond
another's) and no difference (two one-sided tests within the stated margin)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import (
    BestClaim,
    CompareClaim,
    EquivalentClaim,
    GainClaim,
    Pair,
    TrendClaim,
    cells,
    claim_by,
    is_best_cell,
    row_runs,
)
from harness.report.collect import same_value
from harness.report.evidence import Evidence
from harness.report.paper_values import PaperRow, lookup, paper_grid, same_cell
from harness.report.verdict_record import Verdict
from harness.stats.compare import HOLDS, INCONCLUSIVE, REVERSED, Difference, best_share
from harness.stats.equivalence import Equivalence


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
    try:
        return evidence.study_runs(study)
    except HarnessError as exc:
        raise HarnessError(f"study {study} of the same store: {exc}") from None


@dataclass
class PairValues:
    """Two rows' paired difference: observed, resampled, what its interval covers, and the rows' runs."""

    observed: float
    resampled: np.ndarray
    covers: str
    runs: tuple[list[str], list[str]]  # the two rows' runs (a gain combines four)


def _pair(pair: CompareClaim | Pair, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict,
          name: str) -> PairValues | None:  # fmt: skip
    """`better` - `worse` on the pair's metric (rows of this study or of `better_study` / `worse_study`),
    or None with the reason in the verdict's note."""
    frames = [_study_frame(s, frame, evidence) for s in (pair.better_study, pair.worse_study)]
    if any(_unlogged(f, pair.metric, verdict) for f in frames):
        return None
    better, worse = (row_runs(f, rows, f"claim {name}")
                     for f, rows in zip(frames, (pair.better, pair.worse), strict=True))  # fmt: skip
    missing = [side for side, runs in (("better", better), ("worse", worse)) if runs.empty]
    if missing:
        verdict.note = f"no run has {' or '.join(f'{n} ({shown(getattr(pair, n))})' for n in missing)}"
        return None
    resampled = evidence.difference(list(better.run_id), list(worse.run_id), pair.metric)
    observed = [_observed(f, r, pair.metric) for f, r in zip(frames, (better, worse), strict=True)]
    if resampled is None or any(o is None for o in observed):
        verdict.note = f"the runs have no item record for {pair.metric}"
        return None
    covers = evidence.covers(list(better.run_id), list(worse.run_id))
    runs = (list(better.run_id), list(worse.run_id))
    return PairValues(observed[0] - observed[1], resampled, covers, runs)  # type: ignore[operator]


def _shown_difference(verdict: Verdict, observed: float, resampled: np.ndarray, covers: str) -> Difference:
    """Record the claim's difference (its interval and resamples) on the verdict."""
    difference = Difference.of(observed, resampled)
    verdict.resampled, verdict.covers = resampled, covers
    verdict.difference, verdict.low, verdict.high = difference.observed, difference.low, difference.high
    return difference


def _compare(claim: CompareClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    pair = _pair(claim, frame, evidence, verdict, claim.id)
    if pair is not None:
        verdict.comparisons = [_shown_difference(verdict, pair.observed, pair.resampled, pair.covers)]


def _gain(claim: GainClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    """(better - worse) - (than's better - than's worse): one comparison in the family. Two pairs on other
    items are independent draws; on the same items, paired."""
    first = _pair(claim, frame, evidence, verdict, claim.id)
    second = _pair(claim.than, frame, evidence, verdict, claim.id) if first is not None else None
    if first is None or second is None:
        return
    covers = first.covers if first.covers == second.covers else f"{first.covers}; {second.covers}"
    resampled = first.resampled - second.resampled  # two metrics: each difference corrected on its own
    if claim.than.metric == claim.metric:  # one metric: (a - b) - (c - d) corrected as one contrast
        terms = [(first.runs[0], 1.0), (first.runs[1], -1.0), (second.runs[0], -1.0), (second.runs[1], 1.0)]
        contrast = evidence.contrast(terms, claim.metric)
        resampled = resampled if contrast is None else contrast
    difference = _shown_difference(verdict, first.observed - second.observed, resampled, covers)
    verdict.comparisons = [difference]


def _equivalent(claim: EquivalentClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict) -> None:
    """Two one-sided tests of |better - worse| < the stated margin: holds when equivalent, reversed when
    the 95% interval lies beyond the margin, inconclusive otherwise (not in the directional family)."""
    pair = _pair(claim, frame, evidence, verdict, claim.id)
    if pair is None:
        return
    difference = _shown_difference(verdict, pair.observed, pair.resampled, pair.covers)
    margin = evidence.margins.of(claim.metric)
    tost = Equivalence.of(pair.resampled, 0.0, margin)
    verdict.margin, verdict.p_tost = margin, tost.p
    beyond = difference.low > margin or difference.high < -margin
    verdict.verdict = HOLDS if tost.equivalent else REVERSED if beyond else INCONCLUSIVE


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
    runs = [list(grid[k].run_id) for k in keys]
    differences = [evidence.difference(runs[0], other, claim.metric) for other in runs[1:]]
    verdict.comparisons = [Difference.of(observed[0] - o, d)  # type: ignore[operator, arg-type]
                           for o, d in zip(observed[1:], differences, strict=True)]  # fmt: skip
    verdict.share_best = best_share(np.stack(values), 0)  # type: ignore[arg-type]
    verdict.cells = len(keys)
    at = min(range(len(verdict.comparisons)), key=lambda i: verdict.comparisons[i].observed)  # runner-up
    closest, runner_up = verdict.comparisons[at], keys[at + 1]
    verdict.covers = evidence.covers(list(grid[keys[0]].run_id), list(grid[runner_up].run_id))
    verdict.difference, verdict.low, verdict.high = closest.observed, closest.low, closest.high
    verdict.resampled = differences[at]
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
    runs = [list(grid[k].run_id) for k in keys]
    found = [evidence.difference(runs[i + 1], runs[i], claim.metric) for i in steps]
    if any(d is None for d in found):
        verdict.note = f"the runs have no item record for {claim.metric}"
        return
    differences = [sign * d for d in found if d is not None]
    verdict.comparisons = [
        Difference.of(sign * (observed[i + 1] - observed[i]), differences[i])  # type: ignore[operator]
        for i in steps
    ]
    verdict.cells = len(keys)
    at = min(steps, key=lambda i: verdict.comparisons[i].observed)
    weakest = verdict.comparisons[at]
    verdict.covers = evidence.covers(list(grid[keys[at]].run_id), list(grid[keys[at + 1]].run_id))
    verdict.difference, verdict.low, verdict.high = weakest.observed, weakest.low, weakest.high
    verdict.resampled = differences[at]
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


AnyClaim = CompareClaim | BestClaim | TrendClaim | GainClaim | EquivalentClaim


def judge_one(claim: AnyClaim, frame: pd.DataFrame, evidence: Evidence, verdict: Verdict,
               rows: list[PaperRow], configurations: list[dict] | None) -> None:  # fmt: skip
    """The claim's comparisons by its kind (`rows`: the paper's rows of its metric)."""
    if isinstance(claim, GainClaim | EquivalentClaim):  # before CompareClaim: they extend it
        (_gain if isinstance(claim, GainClaim) else _equivalent)(claim, frame, evidence, verdict)  # type: ignore[arg-type]
        return
    if isinstance(claim, CompareClaim):
        _compare(claim, frame, evidence, verdict)
        return
    verdict.grid_cells = _grid_size(claim, configurations)
    paper = paper_grid(rows, claim.among, claim_by(claim))
    (_best if isinstance(claim, BestClaim) else _trend)(claim, frame, evidence, verdict, paper)  # type: ignore[arg-type]
