"""The book's front pages: studies not run yet in the order they can run, the store's other studies."""

from __future__ import annotations

from pathlib import Path

from harness.report.book import Book, other_studies, other_studies_page, run_order
from harness.tracking.tracker import ROLE_TAG, Tracker


def test_a_study_comes_after_the_studies_it_reads() -> None:
    needs = {"chen_ensemble": ["chen_supervised", "chen_negatives"], "d_ens": ["d_members"]}
    studies = ["a", "chen_ensemble", "chen_supervised", "d_ens", "d_members", "chen_negatives"]
    assert run_order(studies, needs) == [
        "a", "chen_supervised", "chen_negatives", "chen_ensemble", "d_members", "d_ens",
    ]  # fmt: skip
    assert run_order(["chen_ensemble"], needs) == ["chen_ensemble"]  # its sources already ran


def test_an_ensembles_sources_are_one_study_or_several() -> None:
    from harness.report.book import source_studies

    assert source_studies({"source_study": "s"}) == ["s"]
    assert source_studies({"source_study": ["s", "t"]}) == ["s", "t"]
    assert source_studies({"method": "pipeline"}) == []


def test_the_stores_own_and_derived_studies_are_named_with_their_report_command(tmp_path: Path) -> None:
    tracker = Tracker()
    own = tracker.client.create_experiment("my_simcse", tags={"study.path": "/home/me/my_simcse.yaml"})
    tracker.client.create_experiment(
        "my_simcse--max_steps-10", tags={"derived_from": "my_simcse", "derived.changes": "max_steps 5 -> 10"}
    )
    old = tracker.client.create_experiment("older_own")  # run before the tags: found by its study run
    tracker.client.create_run(old, tags={ROLE_TAG: "study"})
    tracker.client.create_experiment("lambda_tau_sweep", tags={"study.path": "studies/lambda_tau_sweep.yaml"})
    tracker.client.create_experiment("eval")  # `harness eval --mlflow`: no study
    found = other_studies(tracker, {"lambda_tau_sweep"})
    assert found == {
        "my_simcse": "a study from /home/me/my_simcse.yaml",
        "my_simcse--max_steps-10": "derived from my_simcse (max_steps 5 -> 10)",
        "older_own": "a study whose YAML path was not recorded",
    }
    page = other_studies_page(Book(tmp_path, others=found))
    assert "\\mbox{\\texttt{harness report my\\_simcse-{}-max\\_steps-10}}" in page
    assert own
