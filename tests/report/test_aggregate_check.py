"""The papers' printed aggregates against their own cells (harness.report.aggregate_check), over every
reference block of every shipped report spec: the mismatches found are exactly the known ones, so a new
transcription error (or a fixed one) shows here."""

from __future__ import annotations

from pathlib import Path

from harness.report.aggregate_check import check_table, check_tables
from harness.report.parts.runs_table import RunsTable
from harness.report.spec import REPORTS_DIR, load_spec

KNOWN = {  # (study, source, row, column): checked by hand against the papers' tables
    # David et al. Tables 1-2: (0.502 + 0.625 + (0.126 + 1) / 2) / 3 = 0.5633, printed 0.571
    ("david_main", "David et al. Table 1", "Multitask", "Overall Dev Score"),
    ("david_main", "David et al. Table 2", "Concurrent", "Overall Dev Score"),
    ("ucl_multitask", "David et al.", "Multitask", "Overall (r01)"),
    # (0.300 + 0.581 + (0.172 + 1) / 2) / 3 = 0.489, printed 0.499
    ("david_main", "David et al. Table 2", "Sequential", "Overall Dev Score"),
    # Liao's transfer Avg. over the 8 tasks, 0.015-0.025 off: 609.40 / 8 = 76.175 printed 76.16; Table 5's
    # tau 1.0 row prints MRPC "73." where Table 4 prints 73.1 for the same model (76.265, printed 76.28)
    ("lambda_tau_sweep", "Liao Table 4", "lambda = 0.3", "Avg."),
    ("lambda_tau_sweep", "Liao Table 5", "tau = 1.0", "Avg."),
    ("liao_main", "Liao Table 3", "SBERT baseline", "Avg."),
    ("liao_main", "Liao Table 3", "3palln-lambda0.5-SCL", "Avg."),
    ("liao_main", "Liao Table 3", "allpalln-lambda0.3-SCL", "Avg."),
}


def test_every_printed_aggregate_of_every_reference_block_is_checked() -> None:
    specs = {path.stem: load_spec(path.stem) for path in sorted(REPORTS_DIR.glob("*.yaml"))}
    found = {
        (study, m.source, m.row, m.column) for study, spec in specs.items() for m in check_tables(spec.tables)
    }
    assert found == KNOWN


def _table(reference: dict, same_setup: dict | None = None) -> RunsTable:
    return RunsTable(name="t", kind="runs", label="{variant}", reference_source="Paper",
                     columns={"SST": "dev.sst.acc", "Para": "dev.quora.acc", "STS": "dev.sts.pearson",
                              "Overall": "dev.overall", "Overall r01": "dev.overall_r01"},
                     reference=reference, same_setup=same_setup or {})  # fmt: skip


def test_rounding_is_never_a_mismatch_and_both_overalls_are_the_papers() -> None:
    """0.5, 0.6, 0.35: Chen's Overall 0.48333 prints 0.483 (and 0.484 is within rounding of rounded
    cells), David et al.'s (0.5 + 0.6 + 0.675) / 3 = 0.59167 prints 0.592; 0.495 is a slip."""
    cells = {"SST": 0.5, "Para": 0.6, "STS": 0.35}
    assert check_table(_table({"a": {**cells, "Overall": 0.483, "Overall r01": 0.592}})) == []
    assert check_table(_table({"a": {**cells, "Overall": 0.484}})) == []
    (slip,) = check_table(_table({"a": {**cells, "Overall": 0.495}}))
    assert (slip.row, slip.column, slip.digits) == ("a", "Overall", 3)
    assert str(slip) == "Paper, row a: Overall printed 0.495, its own cells give 0.4833"
    same = _table({"a": {**cells, "Overall": 0.483}}, {"a": {"Elsewhere": {**cells, "Overall": 0.5}}})
    assert [m.source for m in check_table(same)] == ["Elsewhere"]  # the paper's other printings too
    assert check_table(_table({"a": {"SST": 0.5, "Overall": 0.9}})) == []  # members missing: not checked


def test_the_spec_folder_is_the_shipped_one() -> None:
    assert Path(REPORTS_DIR).name == "reports" and len(list(REPORTS_DIR.glob("*.yaml"))) >= 20
