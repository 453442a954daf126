"""How a scorer hands back its task's per-item record (harness.stats.items: each test item's prediction
beside its gold value) without changing the JSON shape of its scores: it returns the record under the
private key ITEMS, and `evaluate_tasks` takes it out into its caller's collector, a list that gets one
record per task that has one (`take_items`). A scorer without a record (geometry, a task registered
elsewhere) returns its scores alone, and its task is not in the record."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas: only where a record is kept
    import pandas as pd

ITEMS = "_items"


def take_items(scores: dict[str, object], collector: list[pd.DataFrame] | None) -> dict[str, object]:
    """`scores` without their record, which goes to `collector` (dropped where there is none)."""
    record = scores.pop(ITEMS, None)
    if record is not None and collector is not None:
        collector.append(record)  # type: ignore[arg-type]
    return scores


def collected(collector: list[pd.DataFrame]) -> pd.DataFrame | None:
    """The collected tasks' records as one, or None where no task had one."""
    from harness.stats.items import concat_items

    return concat_items(collector) if collector else None
