"""`harness paper` (issue 58 item 2): a paper's studies in the order they can run, what its profile can
judge before it runs, and `--run` ending in the paper's book."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.commands.paper import find_paper, papers
from tests.helpers import harness, harness_here


def test_the_five_papers_list_their_studies_in_the_order_they_can_run() -> None:
    found = papers()
    assert sorted(found) == ["chen", "david", "liao", "phillips", "sedghamiz"]
    chen = found["chen"].studies
    assert chen.index("chen_ensemble") > max(chen.index("chen_supervised"), chen.index("chen_negatives"))
    david = found["david"].studies
    assert david.index("david_ensemble") > david.index("david_ensemble_members")
    assert find_paper("supcl").key == "sedghamiz" and find_paper("liao_main").key == "liao"
    listed = harness("paper")
    assert listed.returncode == 0 and "liao: Liao: Sentence Embeddings using Supervised" in listed.stdout
    assert "  lambda_tau_sweep " in listed.stdout
    wrong = harness("paper", "lioa")
    assert wrong.returncode == 2 and "did you mean liao?" in wrong.stderr


def test_the_dry_run_says_which_claims_the_profile_can_judge() -> None:
    """The smoke profile of lambda_tau_sweep judges one of its claims, tau1.0_best_sts: the one its
    report judges after the run (the demo: 1 inconclusive, 17 not run)."""
    result = harness_here("paper", "liao", "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("paper liao: Liao:")
    assert lines[1] == (
        "  1. lambda_tau_sweep (profile smoke): 4 trial(s), ~80 steps; claims it can judge: 1 of 18: "
        "tau1.0_best_sts"
    )
    assert any(line.startswith("  in all: 12 trial(s)") for line in lines)
    assert "`harness paper liao --run`" in result.stdout


@pytest.mark.slow
def test_run_runs_the_papers_studies_in_order_and_ends_with_its_book(
    tmp_path: Path, tiny_bert: Path, harness_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_every_study import tiny_copy

    studies = tmp_path / "studies"
    studies.mkdir()
    for name in papers()["sedghamiz"].studies:
        shutil.copy(tiny_copy(name, tmp_path, tiny_bert), studies / f"{name}.yaml")
    monkeypatch.setattr("harness.resolve.study_spec.STUDIES_DIR", studies)
    monkeypatch.chdir(tmp_path)
    result = harness_here("paper", "sedghamiz", "--run", "--profile", "tiny")
    assert result.returncode == 0, result.stderr
    order = [line for line in result.stdout.splitlines() if line.startswith("== ")]
    assert order == ["== glue_standard", "== supcl_seq_glue", "== supcl_seq_views"]
    book = tmp_path / "reports" / "build" / "paper-sedghamiz"
    assert "the paper's book: reports/build/paper-sedghamiz" in result.stdout
    tex = (book / "book.tex").read_text()
    assert "SupCL-Seq" in tex and "Chen" not in tex  # the paper's section alone
    again = harness_here("paper", "sedghamiz", "--run", "--profile", "tiny")  # resumable: nothing to run
    assert again.returncode == 0 and again.stdout.count("complete") == 3
