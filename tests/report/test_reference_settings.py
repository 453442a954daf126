"""A paper's cell is compared with runs of the setting that printed it (issue 42 item 1): SupCL-Seq prints
CoLA 61.2 and RTE 69.3 in Tables 1, 2 and 3, each for one setting of Table 1; every report cell holding
one of those values is filled by a run of that one setting, in both studies."""

from __future__ import annotations

import json
from collections import defaultdict

from harness.report.parts.runs_table import RunsTable
from harness.report.spec import load_spec
from harness.resolve.study_spec import load_study


def _cell_settings(study: str) -> dict[tuple[str, float], set[str]]:
    """(task, paper value) -> the first stages (JSON) of the paper profile's runs that fill that cell."""
    runs = {run.variant: run for run in load_study(study, "paper").grid_runs()}
    found: dict[tuple[str, float], set[str]] = defaultdict(set)
    for table in load_spec(study).tables:
        if not isinstance(table, RunsTable) or not table.reference:
            continue
        for variant, row in table.rename.items():
            first = list(runs[variant].stages)[0]
            task = getattr(first, "glue_supcon", None)
            for column, metric in table.columns.items():
                value = table.reference.get(row, {}).get(column)
                if task and value is not None and metric.split(".")[1] == task:
                    found[(task, value)].add(json.dumps(first.model_dump(), sort_keys=True))
    return found


def test_each_supcl_seq_paper_cell_is_compared_with_one_setting_across_both_studies() -> None:
    glue, views = _cell_settings("supcl_seq_glue"), _cell_settings("supcl_seq_views")
    assert all(len(settings) == 1 for settings in glue.values()), glue  # one setting per printed value
    shared = glue.keys() & views.keys()
    assert shared == {("CoLA", 61.2), ("RTE", 69.3)}
    for key in shared:
        assert glue[key] == views[key], key
    (cola,) = glue[("CoLA", 61.2)]
    assert json.loads(cola)["views"] == [0.0, 0.1, 0.2, 0.3, 0.4] and json.loads(cola)["batch_size"] == 160


def test_table_4s_cola_and_rte_settings_run_without_a_paper_row() -> None:
    (table,) = [t for t in load_spec("supcl_seq_glue").tables if t.name == "table_4"]
    assert not table.reference and "prints no score" in " ".join(table.caption.split())
    runs = {run.variant: run for run in load_study("supcl_seq_glue", "paper").grid_runs()}
    batches = {v: list(runs[v].stages)[0].batch_size for v in table.where["variant"]}
    assert batches == {"supcl_seq_CoLA_table_4": 128, "supcl_seq_RTE_table_4": 48}  # Appendix A Table 4
