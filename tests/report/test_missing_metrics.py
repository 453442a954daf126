"""Issue 24 item 4: every table and figure says the same one line when the runs lack what it names."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.errors import HarnessError
from harness.report.parts.bar import Bar, bar_frame
from harness.report.parts.line import Line, line_frame
from harness.report.tables import grid_frame

RUNS = pd.DataFrame({"lambda": [0.1, 0.5], "tau": [1.0, 1.0], "STS.avg": [70.0, 71.0], "variant": ["a", "b"]})
SAID = "the runs have no {} (their profile does not evaluate it, or a name in reports/<study>.yaml is wrong)"


@pytest.mark.parametrize(
    ("build", "part"),
    [
        (lambda: grid_frame(RUNS, "lambda", "tau", "TREC.acc", "grid"), "table grid"),
        (lambda: line_frame(RUNS, Line(name="l", kind="line", x="lambda", metric="TREC.acc")), "figure l"),
        (lambda: bar_frame(RUNS, Bar(name="b", kind="bar", label="{variant}", columns={"T": "TREC.acc"})),
         "figure b"),
    ],
)  # fmt: skip
def test_a_missing_metric_is_one_line_naming_the_part(build: object, part: str) -> None:
    with pytest.raises(HarnessError) as caught:
        build()
    assert str(caught.value) == f"{part}: " + SAID.format("TREC.acc")
