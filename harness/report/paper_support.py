"""What a paper's own numbers say of each of its claims, as worded (harness.report.paper_values reads them
from the report spec's reference blocks; a claim's own `paper` values come first):

- "A beats B": `supports` when the paper's A > B, `tie` when equal, `contradicts` when A < B;
- "A's gain over B exceeds C's over D": the same on (A - B) - (C - D);
- "no substantial difference": `supports` when the paper's |A - B| is within the report's stated margin,
  `contradicts` when beyond it;
- "A is the best of a grid": `supports` when no other cell of the paper's grid is higher, `tie` when one
  is as high, `contradicts` when one is higher (named);
- "the metric rises / falls along a param": `supports` when every step between neighbouring values goes
  the claimed way, `partly` when the ends do but some step does not (named), `contradicts` when the ends
  go the other way.
`--` where the paper prints too few of the claim's cells to say. A claim the paper's numbers contradict,
or support only partly, stays in the spec as worded: the tallies then show it, instead of keeping only
the half its tables support."""

from __future__ import annotations

from typing import Any

from harness.report.claim_spec import (
    BestClaim,
    CompareClaim,
    EquivalentClaim,
    GainClaim,
    TrendClaim,
    claim_by,
)
from harness.report.paper_values import PaperRow, lookup, paper_grid, same, same_cell
from harness.stats.equivalence import Margins

SUPPORTS, PARTLY, CONTRADICTS, TIE, UNKNOWN = "supports", "partly", "contradicts", "tie", "--"


def paper_value(rows: list[PaperRow], params: dict[str, Any]) -> float | None:
    """The paper's value for the configuration `params`: the first row every param of which `params` names
    with the same value (None: the paper prints no such row)."""
    for row in rows:
        if set(row.params) <= set(params) and all(same(row.params[p], params[p]) for p in row.params):
            return row.value
    return None


def _sign(difference: float) -> str:
    return SUPPORTS if difference > 0 else TIE if difference == 0 else CONTRADICTS


def _shown(cell: tuple) -> str:
    return ", ".join(str(v) for v in cell)


def _ordered(grid: dict[tuple, float]) -> list[tuple[tuple, float]]:
    def key(cell: tuple) -> tuple:
        return tuple((0, float(v), "") if _number(v) else (1, 0.0, str(v)) for v in cell)

    return sorted(grid.items(), key=lambda item: key(item[0]))


def _number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def paper_says(claim: CompareClaim | BestClaim | TrendClaim, rows: list[PaperRow],
               margins: Margins | None = None) -> tuple[str, str]:  # fmt: skip
    """(the paper's own numbers on the claim, a note naming what goes against it) from the paper's rows of
    the claim's metric (and the claim's own `paper` values; an equivalence within `margins`)."""
    if isinstance(claim, GainClaim):
        return (UNKNOWN, "") if claim.paper_difference is None else (_sign(claim.paper_difference), "")
    if isinstance(claim, EquivalentClaim):
        pair = claim.paper or (paper_value(rows, claim.better), paper_value(rows, claim.worse))
        if None in pair:
            return UNKNOWN, ""
        margin = (margins or Margins()).of(claim.metric)
        gap = abs(pair[0] - pair[1])  # type: ignore[operator]
        return (SUPPORTS, "") if gap < margin else (CONTRADICTS, f"{gap:g} apart, beyond +-{margin:g}")
    if isinstance(claim, CompareClaim):
        pair = claim.paper or (paper_value(rows, claim.better), paper_value(rows, claim.worse))
        if None in pair:
            return UNKNOWN, ""
        return _sign(pair[0] - pair[1]), ""  # type: ignore[operator]
    grid = paper_grid(rows, claim.among, claim_by(claim))
    if isinstance(claim, BestClaim):
        best = tuple(claim.best[p] for p in claim.by)
        claimed = claim.paper if claim.paper is not None else lookup(grid, best)
        others = [(cell, v) for cell, v in grid.items() if not same_cell(cell, best)]
        if claimed is None or not others:
            return UNKNOWN, ""
        cell, top = max(others, key=lambda item: item[1])
        if top < claimed:
            return SUPPORTS, ""
        return (
            TIE if top == claimed else CONTRADICTS
        ), f"the paper's {_shown(cell)}: {top:g} against {claimed:g}"
    cells = _ordered(grid)
    if len(cells) < 2:
        return UNKNOWN, ""
    sign = 1 if claim.direction == "increasing" else -1
    steps = zip(cells[:-1], cells[1:], strict=True)
    against = [
        f"{_shown(a)} to {_shown(b)}: {va:g} to {vb:g}" for (a, va), (b, vb) in steps if sign * (vb - va) <= 0
    ]
    if sign * (cells[-1][1] - cells[0][1]) <= 0:
        return CONTRADICTS, "the ends: " + f"{cells[0][1]:g} to {cells[-1][1]:g}"
    return (PARTLY, "against it: " + "; ".join(against)) if against else (SUPPORTS, "")
