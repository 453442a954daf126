"""Issue 24 item 4: report parts register by kind; a new kind is one class plus its registration, and a
spec lists it by `kind` like the built-in ones."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from harness.report.parts.base import PARTS, PartContext, TablePart, register_part
from harness.report.spec import ReportSpec

BUILT_IN = {"grid": "tables", "runs": "tables", "errors": "tables", "heatmap": "figures", "curve": "figures",
            "line": "figures", "bar": "figures", "projection": "figures"}  # fmt: skip


@register_part("trial_count")
class TrialCount(TablePart):
    """A new table kind, as a researcher would add it: the number of finished trials."""

    caption: str = "finished trials"

    def latex(self, ctx: PartContext) -> str:
        return f"{self.caption}: {len(ctx.frame)}"


def test_every_built_in_kind_is_registered_in_its_section() -> None:
    entries = PARTS.entries()
    assert {kind: entries[kind].section for kind in BUILT_IN} == BUILT_IN


def test_a_new_kind_is_listed_by_kind_and_written_like_the_built_in_ones(tmp_path: Path) -> None:
    spec = ReportSpec.model_validate({"study": "s", "title": "s", "tables": [
        {"name": "count", "kind": "trial_count"},
        {"name": "results", "kind": "runs", "label": "{x}", "columns": {"A": "a"}},
    ]})  # fmt: skip
    count, results = spec.tables
    assert isinstance(count, TrialCount) and type(results).__name__ == "RunsTable"
    context = PartContext(None, pd.DataFrame({"x": [1, 2], "a": [0.5, 0.7]}), tmp_path, "parts/", None)
    assert count.write(context) == "\\input{parts/count.tex}"
    assert (tmp_path / "count.tex").read_text() == "finished trials: 2"


@pytest.mark.parametrize(
    ("part", "message"),
    [
        ({"name": "t", "kind": "tabel"}, "unknown report part kind 'tabel'"),
        ({"name": "t", "kind": "heatmap", "rows": "a", "columns": "b", "metric": "m"}, "belongs in figures"),
        ({"name": "t"}, "a mapping with a 'kind'"),
        ({"name": "t", "kind": "trial_count", "colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_a_wrong_part_is_refused_saying_why(part: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ReportSpec.model_validate({"study": "s", "title": "s", "tables": [part]})
