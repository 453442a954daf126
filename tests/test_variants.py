"""Variants: named configurations with their own method and fields, searched as one dimension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.report.book import build_book
from harness.report.build import build_report
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from tests.helpers import child_runs, tiny_study

VARIANTS = {
    "baseline": {"method": "multitask"},
    "fusion": {"method": "fusion", "temperature": 0.1, "combiner": "batch_round_robin"},
}


def _with_variants(path: str, variants: dict, **profile_variants: dict) -> str:
    config = yaml.safe_load(Path(path).read_text())
    config["variants"] = variants
    config["profiles"]["tiny"]["variants"] = profile_variants
    Path(path).write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_a_variants_study_runs_each_variant_and_reports_one_row_each(tmp_path: Path, tiny_bert: Path) -> None:
    base = {"method": "multitask", "batch_size": 4, "max_steps": 2, "eval_every": 2}
    # named like the shipped study, so its shipped report spec (rows by variant) lays out the table
    path = tiny_study(tmp_path, tiny_bert, {"seed": [3]}, name="unsup_strategies", **base)
    study = load_study(_with_variants(path, VARIANTS, fusion={"temperature": 0.2}))
    assert study.n_trials == 2 and study.search["variant"] == ["baseline", "fusion"]
    opt = run_study(study, progress=False)
    assert sorted(t.params["variant"] for t in opt.trials if t.state.name == "COMPLETE") == [
        "baseline",
        "fusion",
    ]
    runs = {r.data.params["variant"]: r for r in child_runs("unsup_strategies")}
    assert (
        runs["baseline"].data.tags["method"] == "multitask" and runs["fusion"].data.tags["method"] == "fusion"
    )
    assert runs["fusion"].data.params["temperature"] == "0.2"  # the profile's override of the variant
    assert runs["fusion"].data.params["seed"] == "3" and runs["fusion"].data.tags["variant"] == "fusion"
    assert "temperature" not in runs["baseline"].data.params  # each variant logs its own method's fields
    target, _ = build_report("unsup_strategies", None, str(tmp_path / "reports"), None, pdf=False)
    table = (target / "dev_scores.tex").read_text()
    rows = [line.split("&")[0].strip() for line in table.splitlines() if "&" in line and "\\\\" in line]
    assert sorted(r for r in rows[1:] if not r.startswith("\\quad")) == ["baseline", "fusion"]  # one each
    assert sum(r.startswith("\\quad Chen Table 1") for r in rows) == 2  # the paper's rows under both
    assert sum(r.startswith("\\quad 95\\% interval") for r in rows) == 2  # from each run's item record
    claims = json.loads((target / "claims.json").read_text())  # Chen 5.4.1: fusion is the best strategy
    (fusion_best,) = claims["claims"]
    assert fusion_best["verdict"] in ("holds", "holds on part of the grid", "reversed", "inconclusive")
    assert fusion_best["cells"] == 2
    assert claims["at_paper_setting"] is False and "model" in claims["setting"]

    built = build_book(None, str(tmp_path / "reports"), None, pdf=False)  # `harness report --all`
    book = built.folder
    document = (book / "book.tex").read_text()
    assert document.count("\\section{") == 5  # a section per paper: its claims need no run
    # the summary only where a study ran (Chen's): the tiny runs are not at the paper's setting, so nothing
    # is reproduced; every paper lists its claims, what its own tables say of each, and the undecidable ones
    assert document.count("\\subsection*{Summary: which claims hold}") == 1
    assert document.count("\\subsection*{Every claim}") == 5
    assert "Not decidable by the paper's tables" in document
    assert "fusion\\_\\allowbreak{}best (\\texttt{unsup\\_strategies})" in document  # breaks at "_"
    assert "study not run" in document
    assert "No study of this paper has runs at the paper's setting yet" in document
    assert "\\texttt{unsup\\_strategies} & not the paper's & " in document
    assert (
        "\\input{unsup_strategies/dev_scores.tex}" in document
        and (book / "unsup_strategies" / "dev_scores.tex").is_file()
    )
    assert built.built == ["unsup_strategies"] and len(built.not_run) == 23
    assert not (book / "lambda_tau_sweep").exists()  # no empty folder for a study never run
    # the studies never run: one page, each with the exact command, profile included
    assert document.count("\\section*{Studies not run yet}") == 1
    assert "\\texttt{harness run-study lambda\\_tau\\_sweep -{}-profile smoke}" in document
    order = list(built.not_run)  # the order they can run in: an ensemble after the study it reads
    assert order.index("chen_supervised") < order.index("chen_ensemble")
    assert order.index("david_ensemble_members") < order.index("david_ensemble")
    sources = "\\texttt{chen\\_supervised} and \\texttt{chen\\_negatives}"
    assert f"(after {sources}: it reads their runs)" in document
    assert order.index("chen_negatives") < order.index("chen_ensemble")


def test_every_variant_is_validated_before_anything_runs(tmp_path: Path, tiny_bert: Path) -> None:
    path = tiny_study(tmp_path, tiny_bert, {}, name="bad-variant", method="multitask")
    broken = {**VARIANTS, "fusion": {"method": "fusion", "combiner": "pcgrad"}}
    with pytest.raises(
        HarnessError, match=r"\(tiny\), variant fusion: combiner 'pcgrad' cannot be used with fusion"
    ):
        load_study(_with_variants(path, broken))


def test_a_profile_may_only_override_declared_variants(tmp_path: Path, tiny_bert: Path) -> None:
    path = tiny_study(tmp_path, tiny_bert, {}, name="bad-override", method="multitask")
    with pytest.raises(HarnessError, match="overrides variant 'fusoin', which 'variants' lacks"):
        load_study(_with_variants(path, VARIANTS, fusoin={"temperature": 0.2}))


def test_a_profile_may_run_only_some_variants(tmp_path: Path, tiny_bert: Path) -> None:
    path = tiny_study(tmp_path, tiny_bert, {}, name="subset", method="multitask")
    config = yaml.safe_load(Path(_with_variants(path, VARIANTS)).read_text())
    config["profiles"]["tiny"]["only"] = ["fusion"]
    Path(path).write_text(yaml.safe_dump(config))
    study = load_study(path)
    assert study.search["variant"] == ["fusion"] and study.n_trials == 1
    config["profiles"]["tiny"]["only"] = ["fusoin"]
    Path(path).write_text(yaml.safe_dump(config))
    with pytest.raises(HarnessError, match="runs only variant 'fusoin', which 'variants' lacks"):
        load_study(path)
