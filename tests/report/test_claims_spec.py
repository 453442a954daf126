"""The papers' claims in reports/<study>.yaml name rows the study's paper profile produces and metrics its
runs log (their plans' final metrics, harness.resolve.run_plan), checked on a frame of the paper profile's
grid runs as the report builds it from real runs; and a plan's final metrics are what an evaluation
really logs."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.data.transfer import TRANSFER_TASKS, Labelled
from harness.evaluate.registry import ScoreOptions, get_task, tasks
from harness.evaluate.suite import evaluate_tasks, flat_metrics
from harness.evaluate.tasks.sts import STS_TASKS
from harness.report.claim_spec import (
    BestClaim,
    TrendClaim,
    cells,
    row_runs,
)
from harness.report.decidable import claim_problems, grid_frame
from harness.report.paper_support import UNKNOWN, paper_says
from harness.report.paper_values import paper_rows
from harness.report.spec import REPORTS_DIR, ReportSpec, load_spec
from harness.resolve.run_spec import ResolvedRun
from harness.resolve.study_spec import PAPER_PROFILE, load_study

SPECS = sorted(p.stem for p in REPORTS_DIR.glob("*.yaml"))
WITH_CLAIMS = [s for s in SPECS if load_spec(s).claims]
# the reproduction book's sections (`paper:` of the specs), one per paper in /work/shared/papers
PAPERS = ("Chen", "David, Mon, Zhu", "Liao", "Phillips", "Sedghamiz et al.")


@pytest.mark.slow
@pytest.mark.parametrize("study", WITH_CLAIMS)
def test_every_claim_names_rows_and_a_metric_of_the_paper_profile(study: str) -> None:
    spec = load_spec(study)
    frame, runs = grid_frame(study)
    problems = [p for claim in spec.claims for p in claim_problems(claim, frame, runs)]
    assert not problems, "\n".join(problems)
    unknown = [c.id for c in spec.claims if paper_says(c, paper_rows(spec.tables, c.metric))[0] == UNKNOWN]
    assert not unknown, f"every claim has the paper's values (its own or the reference blocks'): {unknown}"


@pytest.mark.slow
@pytest.mark.parametrize("study", WITH_CLAIMS)
def test_other_profiles_leave_claims_not_run_never_refused(study: str) -> None:
    """A smoke profile's smaller grid lacks some claimed rows (the report says `not run`); none of its
    rows may match several configurations, which the report refuses."""
    for profile in load_study(study, PAPER_PROFILE).profiles_available:
        frame, _ = grid_frame(study, profile)
        for claim in load_spec(study).claims:
            if isinstance(claim, BestClaim | TrendClaim):
                cells(frame, claim)
                continue
            for side, where in claim.rows().items():
                other = getattr(claim, f"{side}_study")
                row_runs(grid_frame(other, profile)[0] if other else frame, where, f"claim {claim.id}")


def _spec_with(study: str, claim: dict[str, Any]) -> ReportSpec:
    spec = load_spec(study)
    return ReportSpec.model_validate(
        {"study": study, "title": spec.title, "paper": spec.paper, "claims": [claim]}
    )


def _problems(study: str, claim: dict[str, Any]) -> list[str]:
    frame, runs = grid_frame(study)
    return claim_problems(_spec_with(study, claim).claims[0], frame, runs)


COMPARE = {
    "id": "c", "kind": "compare", "source": "Liao 5.1, Table 6", "text": "t", "metric": "STS12-16.wmean",
    "better": {"lambda": 0.3, "tau": 1.0}, "worse": {"lambda": 0.1, "tau": 1.0}, "paper": [70.44, 69.18],
}  # fmt: skip
BEST = {
    "id": "b", "kind": "best", "source": "Liao 5.1, Table 6", "text": "t", "metric": "STS12-16.wmean",
    "among": {"tau": 1.0}, "by": ["lambda"], "best": {"lambda": 0.3}, "paper": 70.44,
}  # fmt: skip


def test_a_well_formed_claim_passes_the_check() -> None:
    assert _problems("lambda_tau_sweep", COMPARE) == []
    assert _problems("lambda_tau_sweep", BEST) == []


def test_a_claim_on_a_row_the_study_does_not_produce_fails() -> None:
    wrong = {**COMPARE, "worse": {"lambda": 0.4, "tau": 1.0}}  # the grid has no lambda 0.4
    assert any("worse matches no run" in p for p in _problems("lambda_tau_sweep", wrong))
    assert _problems("lambda_tau_sweep", {**BEST, "best": {"lambda": 0.4}})
    no_variant = {
        **COMPARE,
        "better": {"variant": "allpalln_lambda0.7"},
        "worse": {"variant": "sbert_baseline"},
    }
    assert any("better matches no run" in p for p in _problems("liao_main", no_variant))


def test_a_row_of_several_configurations_fails() -> None:
    problems = _problems("lambda_tau_sweep", {**COMPARE, "worse": {"lambda": 0.1}})  # every tau
    assert any("several configurations (they differ in tau)" in p for p in problems)


def test_a_claim_on_an_unknown_metric_fails() -> None:
    problems = _problems("lambda_tau_sweep", {**COMPARE, "metric": "STS12-16.mean"})
    assert problems and all("logs no STS12-16.mean" in p for p in problems)
    # a metric of another objective: GLUE runs log no CS224N overall
    glue = {
        **COMPARE,
        "metric": "dev.overall",
        "better": {"variant": "supcl_seq_CoLA"},
        "worse": {"variant": "standard_CoLA"},
    }
    assert _problems("supcl_seq_glue", glue)
    assert not _problems("supcl_seq_glue", {**glue, "metric": "dev.CoLA.mcc"})


def test_every_paper_has_claims() -> None:
    per_paper = Counter({paper: 0 for paper in PAPERS})
    for study in SPECS:
        spec = load_spec(study)
        section = spec.paper.split(":")[0]
        if spec.paper != "Other studies":
            assert section in PAPERS, f"{study}: paper {spec.paper!r}"
            per_paper[section] += len(spec.claims)
    assert all(per_paper[p] >= 1 for p in PAPERS), per_paper


# a plan's final metrics against what an evaluation logs


def random_encode(sentences: list[str]) -> dict[str, np.ndarray]:
    vectors = np.random.default_rng(0).standard_normal((len(sentences), 8)).astype(np.float32)
    return dict(zip(sentences, vectors, strict=True))


def transfer_results() -> dict[str, dict[str, object]]:
    """Each transfer task's scorer on 40 labelled sentences (pairs for MRPC) per split it reads: the scores
    a SentEval task returns, in seconds."""
    results = {}
    for task in TRANSFER_TASKS:
        texts = [[f"{task} {split} {i}" for i in range(40)] for split in get_task(task).splits]
        splits = {
            split: Labelled(part, np.arange(40) % 2, [f"{t} pair" for t in part] if task == "MRPC" else None)
            for split, part in zip(get_task(task).splits, texts, strict=True)
        }
        sentences = sorted({s for part in splits.values() for s in part.sentences()})
        results[task] = get_task(task).score(splits, random_encode(sentences), ScoreOptions())
    return results


@pytest.mark.slow
def test_declared_scores_are_what_each_scorer_returns(data_dir: Path) -> None:
    built_in = [*STS_TASKS, "STSBenchmark-dev", "STSBenchmark-train", "AlignUniform"]
    results = {**evaluate_tasks(random_encode, data_dir, built_in), **transfer_results()}
    for task, scores in results.items():
        numeric = {k for k, v in scores.items() if isinstance(v, int | float) and k != "n"}
        assert numeric == set(get_task(task).scores), task
    # every registered task (but one a test file registers: tests/evaluate/test_registry.py)
    assert set(tasks()) - set(results) <= {"STSBenchmark-dev-head"}


def _with_final_tasks(run: ResolvedRun, final: list[str]) -> ResolvedRun:
    return dataclasses.replace(run, settings=run.settings.model_copy(update={"final_tasks": final}))


@pytest.mark.slow
def test_the_planned_final_metrics_of_an_sts_run_are_flat_metrics_of_its_evaluation(data_dir: Path) -> None:
    run = next(r for r in load_study("liao_main", PAPER_PROFILE).grid_runs() if r.variant == "sbert_baseline")
    results = {**evaluate_tasks(random_encode, data_dir, [*STS_TASKS, "AlignUniform"]), **transfer_results()}
    assert set(run.plan.scoring.final_metrics) == set(flat_metrics(results))  # eval_suite full
    assert {"STS12-16.wmean", "STS.avg", "transfer.avg", "MRPC.f1"} <= set(run.plan.scoring.final_metrics)
    one = _with_final_tasks(run, ["STSBenchmark"])
    evaluated = flat_metrics(evaluate_tasks(random_encode, data_dir, ["STSBenchmark"]))
    assert set(one.plan.scoring.final_metrics) == set(evaluated)
    assert "STS.avg" not in set(one.plan.scoring.final_metrics)  # an aggregate needs all its members


def test_the_planned_final_metrics_of_multitask_and_glue_runs(data_dir: Path) -> None:
    from harness.data.cs224n import read_multitask
    from harness.evaluate.cs224n_scores import score_predictions
    from harness.scoring.glue import glue_scores

    data = read_multitask(data_dir)
    right = {"sst": np.eye(5)[data.sst_dev.labels], "quora": data.quora_dev.targets.astype(float)}
    predictions = {**right, "sts": data.sts_dev.targets}
    chen = {r.variant: r for r in load_study("chen_supervised", PAPER_PROFILE).grid_runs()}
    scored = {"sst": "3_given_single_sst", "quora": "3_given_single_quora", "sts": "3_given_single_sts"}
    planned = set(chen["3_given"].plan.scoring.final_metrics)
    assert planned == {f"dev.{k}" for k in score_predictions(predictions, data)}
    for task, variant in scored.items():
        only = score_predictions({task: predictions[task]}, data)
        assert set(chen[variant].plan.scoring.final_metrics) == {f"dev.{k}" for k in only}
    ensemble = load_study("chen_ensemble", PAPER_PROFILE).grid_runs()[0]
    assert set(ensemble.plan.scoring.final_metrics) == set(chen["3_given"].plan.scoring.final_metrics)

    for run in load_study("supcl_seq_glue", PAPER_PROFILE).grid_runs():
        task = [s.glue for s in run.stages if s.kind == "glue"][-1]
        gold = np.arange(20) % 2
        logged = {f"dev.{k}" for k in glue_scores(task, gold.astype(float), gold)}
        assert set(run.plan.scoring.final_metrics) == logged, run.variant
