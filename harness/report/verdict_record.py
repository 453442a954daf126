"""One claim's verdict and the numbers beside it (harness.report.verdicts makes them; JSON: the parent
run's `claims.json`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.stats.compare import Difference

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
