"""`harness plan STUDY --seeds K`: for each claim of the study's report spec, the smallest difference its
comparison could detect at 80% power with K seeds per row (harness.stats.power), estimated from the
study's finished runs in MLflow (their item records, and the spread between their seeds), beside what
K seeds would cost by the plan's time estimate."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import BestClaim, CompareClaim, cells, is_best_cell, row_runs
from harness.report.evidence import Evidence
from harness.report.spec import load_spec
from harness.stats.power import detectable_difference
from harness.tracking.study_runs import trial_frame
from harness.tracking.tracker import Tracker


def _pair(claim: CompareClaim | BestClaim, frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The two rows a claim compares: better and worse, or the claimed best cell and its runner-up (the
    closest other cell by mean score)."""
    if isinstance(claim, CompareClaim):
        better, worse = (row_runs(frame, rows, f"claim {claim.id}") for rows in (claim.better, claim.worse))
        return None if better.empty or worse.empty else (better, worse)
    grid = cells(frame, claim)
    claimed = [key for key in grid if is_best_cell(key, claim)]
    others = [runs for key, runs in grid.items() if key not in claimed and claim.metric in runs]
    if not claimed or not others:
        return None
    return grid[claimed[0]], max(others, key=lambda runs: runs[claim.metric].mean())


def _variances(
    claim: CompareClaim | BestClaim, rows: tuple, evidence: Evidence
) -> tuple[float, float | None]:
    """(the paired item variance of one seed's difference, averaged over the seeds both rows ran; the
    sample variance of the per-seed differences, None with fewer than two)."""
    a, b = rows
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
        try:
            rows = _pair(claim, frame)
            if rows is None:
                lines.append(f"  {claim.id}: not estimated (its rows have no finished runs)")
                continue
            item_variance, seed_variance = _variances(claim, rows, evidence)
        except HarnessError as exc:
            lines.append(f"  {claim.id}: not estimated ({exc})")
            continue
        mde = detectable_difference(item_variance, seed_variance, seeds)
        paper = (
            ""
            if claim.paper_difference is None
            else f"; the paper's difference {claim.paper_difference:+.2f}"
        )
        if seed_variance is None:
            lines.append(f"  {claim.id} ({claim.metric}): >= {mde:.2f} (items alone: one finished seed, so "
                         f"seed noise unknown; run 2+ seeds to size it){paper}")  # fmt: skip
        else:
            lines.append(f"  {claim.id} ({claim.metric}): {mde:.2f}{paper}")
    return lines
