"""Issue 21 item 5: a report's paper rows get a difference only where the runs were made at the paper's
setting; labels read as in a paper; no LaTeX cruft; notices in one box; the book lists studies not run."""

from __future__ import annotations

import pandas as pd

from harness.report.parts.runs_table import RunsTable, runs_latex
from harness.report.setting import Setting, paper_setting
from harness.report.tables import latex_label
from harness.resolve.paper_plans import PaperPlans, paper_plans
from harness.resolve.study_spec import load_study

LIAO = {"STS12": 65.72, "Avg.": 69.18}


def _frame(**params: object) -> pd.DataFrame:
    base = {"selection": "allpalln", "lambda": 0.1, "tau": 1.0, "STS12.spearman_wmean": 70.0,
            "STS12-16.wmean": 75.0}  # fmt: skip
    return pd.DataFrame([{**base, **params}])


def _spec() -> RunsTable:
    return RunsTable(name="sts", kind="runs", label="SCL {selection}, lambda = {lambda}, tau = {tau}",
                     columns={"STS12": "STS12.spearman_wmean", "Avg.": "STS12-16.wmean"},
                     reference={"SCL allpalln, lambda = 0.1, tau = 1.0": LIAO},
                     reference_source="Liao Table 2", caption="Liao Table 2.")  # fmt: skip


def _plans(study: str) -> PaperPlans:
    """The paper profile's plans, as a study's parent run logs them when it starts (through JSON)."""
    return PaperPlans.from_json(paper_plans(load_study(study, "smoke")).to_json())


def _paper_frame(**changes: object) -> pd.DataFrame:
    """Params of lambda_tau_sweep's paper profile (what its runs log), with `changes`."""
    flat = load_study("lambda_tau_sweep", "paper").grid_runs()[0].flat()
    row = {k: str(v) for k, v in flat.items()}
    return pd.DataFrame([{**row, **changes}])


def test_the_smoke_profile_is_not_at_the_papers_setting_and_the_paper_profile_is() -> None:
    setting = paper_setting(
        _plans("lambda_tau_sweep"), _paper_frame(model="all-MiniLM-L6-v2", max_steps="60")
    )
    assert setting is not None and not setting.matches
    assert setting.paper_model == "google/bert_uncased_L-8_H-512_A-8"
    assert "model all-MiniLM-L6-v2 (paper: google/bert_uncased_L-8_H-512_A-8)" in setting.differences
    assert "max_steps 60 (paper: None)" in setting.differences
    assert paper_setting(
        _plans("lambda_tau_sweep"), _paper_frame()
    ).matches  # runs of another name, same setting
    assert paper_setting(None, _paper_frame()) is None  # a study without a paper profile
    assert paper_setting(PaperPlans(("a",), None), _paper_frame()) is None


def test_no_difference_row_where_the_model_differs_from_the_papers() -> None:
    differ = Setting("google/bert_uncased_L-8_H-512_A-8", "model all-MiniLM-L6-v2 (paper: google/...)")
    latex = runs_latex(_frame(), _spec(), differ)
    assert "Delta" not in latex
    assert r"\quad Liao Table 2 (google/bert\_uncased\_L-8\_H-512\_A-8) & 65.72 & 69.18" in latex
    assert "these runs are not (see the notes), so no difference is shown" in latex
    same = runs_latex(_frame(), _spec(), Setting("google/bert_uncased_L-8_H-512_A-8", ""))
    assert r"\quad $\Delta$ & +4.28 & +5.82" in same and "(google" not in same


def test_row_labels_read_as_in_a_paper_and_carry_no_empty_groups() -> None:
    latex = runs_latex(_frame(), _spec(), Setting("m", ""))
    assert r"SCL allpalln, $\lambda$ = 0.1, $\tau$ = 1.0 & 70.00 & 75.00" in latex  # no bold untested
    assert "{}" not in latex.replace(r"\begin{tabular}{lrr}", "")  # no {}{}{} to keep labels distinct
    assert latex_label("lambda_x = 2, tau = 1") == r"lambda\_x = 2, $\tau$ = 1"  # a name, not the Greek


def test_notices_are_one_box() -> None:
    from harness.report.build import notes_box

    box = notes_box(["The paper profile needs: internet", "Not in the tables: trial 3 (FAILED): boom"])
    assert box.startswith(r"\noindent\fbox{") and box.count("\\item ") == 2 and "Notes" in box


def test_figure_labels_are_words() -> None:
    from harness.report.figures import in_words

    assert in_words("STS12-16.wmean") == "STS12-16 mean of the weighted-mean Spearman x 100"
    assert in_words("dev.STSBenchmark.spearman") == "dev STS-B Spearman x 100"
    assert in_words("train.loss") == "training loss"


def test_numbers_match_by_value_and_the_learning_rate_is_part_of_the_setting() -> None:
    """A run logs its params as text: 0.00002 and 2e-05 are one learning rate; another lr is another
    setting, named in the differences."""
    paper_lr = float(_paper_frame()["lr"].iloc[0])
    assert paper_setting(_plans("lambda_tau_sweep"), _paper_frame(lr=f"{paper_lr:.8f}")).matches
    setting = paper_setting(_plans("lambda_tau_sweep"), _paper_frame(lr="0.001"))
    assert not setting.matches and setting.differences.startswith("lr 0.001 (paper: ")


def test_each_run_is_held_against_its_own_variants_paper_setting() -> None:
    """David et al.'s lr variants (Table 8) each have their paper's lr: a run of variant lr_2e-5 at 2e-5
    is at the paper's setting, one at the default variant's 1e-5 is not."""
    runs = {run.variant: run.flat() for run in load_study("david_ucl_hyperparameters", "paper").grid_runs()}
    rows = [{k: str(v) for k, v in runs[variant].items()} for variant in ("default", "lr_2e-5")]
    assert paper_setting(_plans("david_ucl_hyperparameters"), pd.DataFrame(rows)).matches
    rows[1]["lr"] = rows[0]["lr"]
    assert (
        "lr 1e-05 (paper: 1e-05, 2e-05)"
        in paper_setting(_plans("david_ucl_hyperparameters"), pd.DataFrame(rows)).differences
    )
