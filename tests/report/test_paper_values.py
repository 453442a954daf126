"""The paper's own numbers by configuration (harness.report.paper_values): reference labels read back
through their table's template and `rename`, under its `where`, for the metric of a column."""

from __future__ import annotations

from harness.report.paper_values import lookup, paper_grid, paper_rows
from harness.report.parts.runs_table import RunsTable

AVG = "STS12-16.wmean"


def _tau_table(**changes: object) -> RunsTable:
    fields = {"name": "tau_sts", "kind": "runs", "label": "tau = {tau}", "where": {"lambda": 0.5},
              "columns": {"STS12": "STS12.spearman_wmean", "Avg.": AVG},
              "reference": {"tau = 0.1": {"STS12": 59.71, "Avg.": 61.61},
                            "tau = 1.0": {"Avg.": 70.05}}}  # fmt: skip
    return RunsTable(**{**fields, **changes})


def test_a_reference_row_is_read_back_into_its_params_and_the_metrics_column() -> None:
    rows = paper_rows([_tau_table()], AVG)
    assert [(r.params, r.value) for r in rows] == [({"lambda": 0.5, "tau": "0.1"}, 61.61),
                                                   ({"lambda": 0.5, "tau": "1.0"}, 70.05)]  # fmt: skip
    assert [r.value for r in paper_rows([_tau_table()], "STS12.spearman_wmean")] == [59.71]
    assert paper_rows([_tau_table()], "SICKRelatedness.spearman") == []


def test_the_grid_keeps_the_rows_of_the_claims_among_and_matches_numbers_as_numbers() -> None:
    rows = paper_rows([_tau_table()], AVG)
    grid = paper_grid(rows, {"lambda": 0.5}, ["tau"])
    assert lookup(grid, (1,)) == 70.05 and lookup(grid, (0.1,)) == 61.61 and lookup(grid, (0.3,)) is None
    assert paper_grid(rows, {"lambda": 0.1}, ["tau"]) == {}  # another lambda's grid: not these rows
    assert paper_grid(rows, {"lambda": [0.1, 0.5]}, ["tau"]) != {}  # a list accepts any of its values
    assert paper_grid(rows, {}, ["selection"]) == {}  # rows that do not name the grid's param


def test_renamed_labels_and_unreadable_templates() -> None:
    renamed = _tau_table(rename={"tau = 0.1": "cold"}, reference={"cold": {"Avg.": 61.61}})
    assert [r.params["tau"] for r in paper_rows([renamed], AVG)] == ["0.1"]
    formatted = _tau_table(label="tau = {tau:.1f}")  # a format spec: cannot be read back, so not read
    assert paper_rows([formatted], AVG) == []
    two = _tau_table(label="{selection}, tau = {tau}", reference={"allpalln, tau = 1.0": {"Avg.": 70.05}})
    (row,) = paper_rows([two], AVG)
    assert row.params == {"lambda": 0.5, "selection": "allpalln", "tau": "1.0"}


def test_a_grid_tables_reference_cells_and_rows_renamed_alike() -> None:
    from harness.report.parts.grid_table import GridTable

    grid = GridTable(name="g", kind="grid", rows="head", columns="variant", metric=AVG,
                     rename={"cosine": "Cosine", "a": "Pipeline A"},
                     derived_rows={"Difference": {"op": "difference", "of": ["Cosine", "linear"]}},
                     reference={"Cosine": {"Pipeline A": 0.593, "b": 0.588},
                                "Difference": {"Pipeline A": 0.016}})  # fmt: skip
    rows = paper_rows([grid], AVG)
    assert [(r.params, r.value) for r in rows] == [({"head": "cosine", "variant": "a"}, 0.593),
                                                   ({"head": "cosine", "variant": "b"}, 0.588)]  # fmt: skip
    alike = _tau_table(label="{variant}", where={},
                       rename={"CoLA_3": "[0.0,0.1,0.2]", "RTE_3": "[0.0,0.1,0.2]"},
                       reference={"[0.0,0.1,0.2]": {"Avg.": 58.9}})  # fmt: skip
    assert [r.params["variant"] for r in paper_rows([alike], AVG)] == ["CoLA_3", "RTE_3"]
