"""Which of a study's claims a profile can judge, known before it runs: the profile's grid runs as the
report will see them (one row per run: its logged params, `run_id`, `trial`), each claim's rows matched
among them as the report matches them (harness.report.claim_spec), and its metric among the final
metrics the rows' runs will log (their plans, harness.resolve.run_plan). `harness paper --dry-run` says
it per study; tests/report/test_claims_spec.py holds every shipped claim to it on the paper profile."""

from __future__ import annotations

import pandas as pd

from harness.errors import HarnessError
from harness.report.claim_spec import (
    BestClaim,
    Claim,
    CompareClaim,
    GainClaim,
    TrendClaim,
    cells,
    is_best_cell,
    row_runs,
)
from harness.resolve.run_spec import ResolvedRun
from harness.resolve.study_spec import PAPER_PROFILE, load_study


def grid_frame(study: str, profile: str = PAPER_PROFILE) -> tuple[pd.DataFrame, dict[str, ResolvedRun]]:
    """The profile's grid runs as the report sees them: one row per run, its logged params (`run.flat()`,
    the variant first), `run_id` and `trial`; and the runs by id."""
    runs = load_study(study, profile).grid_runs()
    by_id = {f"run{i}": run for i, run in enumerate(runs)}
    frame = pd.DataFrame(
        [{**run.flat(), "run_id": rid, "trial": i} for i, (rid, run) in enumerate(by_id.items())]
    )
    return frame, by_id


def claim_problems(
    claim: Claim, frame: pd.DataFrame, runs: dict[str, ResolvedRun], profile: str = PAPER_PROFILE
) -> list[str]:
    """Why the profile's runs (`frame`, `runs`: `grid_frame`) cannot judge a claim: a row that matches no
    run or several configurations, a best-of-grid claim whose claimed cell is not one of its cells, a
    metric a row's runs do not log; none where they can."""
    rows: dict[str, pd.DataFrame] = {}
    sides = {"better": (frame, runs), "worse": (frame, runs)}  # a row of another study: its own grid
    try:
        if isinstance(claim, TrendClaim):
            grid = cells(frame, claim)
            if len(grid) < 2:
                return [f"{claim.id}: among {claim.among} by {claim.by}: {len(grid)} cell(s), no step"]
            rows = {f"cell {key}": group for key, group in grid.items()}
        elif isinstance(claim, BestClaim):
            grid = cells(frame, claim)
            if len(grid) < 2:
                return [f"{claim.id}: among {claim.among} by {claim.by}: {len(grid)} cell(s), not a grid"]
            best = [key for key in grid if is_best_cell(key, claim)]
            if len(best) != 1:
                return [f"{claim.id}: best {claim.best} is not one of the cells {sorted(grid)}"]
            rows = {f"cell {key}": group for key, group in grid.items()}
        else:
            for side in sides:
                other = getattr(claim, f"{side}_study")
                sides[side] = grid_frame(other, profile) if other else sides[side]
            rows = {
                name: row_runs(sides[name][0], where, f"claim {claim.id}")
                for name, where in claim.rows().items()
            }
    except HarnessError as exc:
        return [f"{claim.id}: {exc}"]
    problems = []
    if isinstance(claim, GainClaim):  # the other pair of a gain claim: its rows, its metric
        than = claim.than
        rows_of_than = {"better": than.better, "worse": than.worse}
        other = CompareClaim(id=f"{claim.id}.than", source="-", text="-", metric=than.metric, **rows_of_than)
        problems += claim_problems(other, frame, runs, profile)
    for name, matched in rows.items():
        known = sides.get(name, (frame, runs))[1]
        if matched.empty:
            problems.append(f"{claim.id}: {name} matches no run of profile {profile}")
        for rid in matched["run_id"]:
            if claim.metric not in set(known[rid].plan.scoring.final_metrics):
                problems.append(
                    f"{claim.id}: {name}'s run {known[rid].variant or rid} logs no {claim.metric}"
                )
    return problems
