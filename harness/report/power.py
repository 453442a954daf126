"""`harness plan STUDY --seeds K`: for each claim of the study's report spec, the smallest difference its
comparison could detect at 80% power with K seeds per row (harness.stats.power), estimated from the
study's finished runs in MLflow (their item records, and the spread between their seeds), beside what
K seeds would cost by the plan's time estimate; and where the paper gives the same pair's difference
(the claim's `paper` values, or the reference blocks), the power with K seeds to detect the paper's own
effect and the number of seeds that reaches 80%."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import (
    BestClaim,
    CompareClaim,
    EquivalentClaim,
    GainClaim,
    TrendClaim,
    cells,
    claim_by,
    is_best_cell,
    row_runs,
)
from harness.report.evidence import Evidence
from harness.report.paper_support import paper_value
from harness.report.paper_values import lookup, paper_grid, paper_rows
from harness.report.spec import load_spec
from harness.stats.power import detectable_difference, power_at, seeds_for
from harness.tracking.study_runs import trial_frame
from harness.tracking.tracker import Tracker

Claim = CompareClaim | BestClaim | TrendClaim
Pair = tuple[pd.DataFrame, pd.DataFrame, float | None]  # the better row, the worse, the paper's difference


def _pair(claim: Claim, frame: pd.DataFrame, tables: list) -> Pair | None:
    """The two rows a claim compares and the paper's difference for them: better and worse, the claimed
    best cell and its runner-up (the closest other cell by mean score), or a trend's weakest step."""
    rows = paper_rows(tables, claim.metric)
    if isinstance(claim, CompareClaim):
        better, worse = (row_runs(frame, rows_, f"claim {claim.id}") for rows_ in (claim.better, claim.worse))
        values = claim.paper or (paper_value(rows, claim.better), paper_value(rows, claim.worse))
        effect = None if None in values else values[0] - values[1]  # type: ignore[operator]
        return None if better.empty or worse.empty else (better, worse, effect)
    grid, paper = cells(frame, claim), paper_grid(rows, claim.among, claim_by(claim))
    mean = {key: runs[claim.metric].mean() for key, runs in grid.items() if claim.metric in runs}
    if isinstance(claim, TrendClaim):
        keys = sorted(mean, key=lambda key: tuple(map(str, key)))
        sign = 1 if claim.direction == "increasing" else -1
        steps = [(a, b) for a, b in zip(keys[:-1], keys[1:], strict=True)]
        if not steps:
            return None
        low, high = min(steps, key=lambda step: sign * (mean[step[1]] - mean[step[0]]))
        better, worse = (high, low) if sign > 0 else (low, high)
    else:
        claimed = [key for key in mean if is_best_cell(key, claim)]
        others = [key for key in mean if key not in claimed]
        if not claimed or not others:
            return None
        better, worse = claimed[0], max(others, key=mean.__getitem__)
    ends = lookup(paper, better), lookup(paper, worse)
    if isinstance(claim, BestClaim) and claim.paper is not None:
        ends = claim.paper, ends[1]
    return grid[better], grid[worse], None if None in ends else ends[0] - ends[1]  # type: ignore[operator]


def _variances(claim: Claim, rows: Pair, evidence: Evidence) -> tuple[float, float | None]:
    """(the paired item variance of one seed's difference, averaged over the seeds both rows ran; the
    sample variance of the per-seed differences, None with fewer than two)."""
    a, b, _ = rows
    seeds = [s for s in a.get("seed", pd.Series([None])) if s in set(b.get("seed", pd.Series([None])))]
    item, per_seed = [], []
    for seed in seeds or [None]:
        ra = a if seed is None else a[a.seed == seed]
        rb = b if seed is None else b[b.seed == seed]
        va = evidence.resampled(list(ra.run_id[:1]), [claim.metric]).get(claim.metric)
        vb = evidence.resampled(list(rb.run_id[:1]), [claim.metric]).get(claim.metric)
        if va is None or vb is None:
            raise HarnessError(f"claim {claim.id}: the runs have no item record for {claim.metric}")
        item.append(float(np.var(va - vb, ddof=1)))
        per_seed.append(float(ra[claim.metric].iloc[0] - rb[claim.metric].iloc[0]))
    seed_variance = float(np.var(per_seed, ddof=1)) if len(per_seed) >= 2 else None
    return float(np.mean(item)), seed_variance


def power_lines(
    study: str, profile: str | None, tracker: Tracker, seeds: int, evidence: Evidence, cost: str
) -> list[str]:
    """One line per claim: its detectable difference with `seeds` seeds, and the cost line first."""
    frame, _ = trial_frame(tracker, study, profile)
    spec = load_spec(study)
    if not spec.claims:
        return [f"{study}: no claims in reports/{study}.yaml to size seeds for"]
    finished = frame["seed"].nunique() if "seed" in frame.columns else 1
    lines = [f"with {seeds} seed(s) per row: {cost}; smallest difference each claim could detect at 80% "
             f"power (two-sided 0.05), from {len(frame)} finished run(s), {finished} seed(s):"]  # fmt: skip
    for claim in spec.claims:
        if isinstance(claim, GainClaim | EquivalentClaim):
            lines.append(f"  {claim.id}: not sized (a {claim.kind} claim is not one paired difference)")
            continue
        try:
            rows = _pair(claim, frame, spec.tables)
            if rows is None:
                lines.append(f"  {claim.id}: not estimated (its rows have no finished runs)")
                continue
            item_variance, seed_variance = _variances(claim, rows, evidence)
        except HarnessError as exc:
            lines.append(f"  {claim.id}: not estimated ({exc})")
            continue
        mde = detectable_difference(item_variance, seed_variance, seeds)
        paper = "" if rows[2] is None else _at_paper(rows[2], item_variance, seed_variance, seeds)
        if seed_variance is None:
            lines.append(f"  {claim.id} ({claim.metric}): >= {mde:.2f} (items alone: one finished seed, so "
                         f"seed noise unknown; run 2+ seeds to size it){paper}")  # fmt: skip
        else:
            lines.append(f"  {claim.id} ({claim.metric}): {mde:.2f}{paper}")
    return lines


def _at_paper(effect: float, item_variance: float, seed_variance: float | None, seeds: int) -> str:
    """The power with `seeds` seeds at the paper's own difference, and the seeds that reach 80%."""
    power = power_at(effect, item_variance, seed_variance, seeds)
    needed = seeds_for(effect, item_variance, seed_variance)
    advice = (
        f"80% needs {needed} seed(s)"
        if needed is not None
        else "no number of seeds reaches 80%: the test items alone are too few for it"
    )
    if seed_variance is None and needed is not None:
        advice += " (seed noise unknown: run 2+ seeds to size it)"
    return f"; at the paper's difference {effect:+.2f}: power {100 * power:.0f}% with {seeds}, {advice}"
