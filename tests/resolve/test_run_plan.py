"""One plan per run (issue 57 item 1): what a resolved run will train, score and log, worked out once,
each scorer supplying its part; read back from its JSON as logged."""

from __future__ import annotations

import json

from harness.resolve.paper_plans import PaperPlans, paper_plans
from harness.resolve.run_plan import RunPlan
from harness.resolve.run_spec import resolve_run
from harness.resolve.study_spec import load_study


def test_the_plan_is_worked_out_once_and_reads_back_from_its_json() -> None:
    run = resolve_run({"method": "scl", "eval_suite": "transfer", "objective_metric": "STSBenchmark.pearson"})
    assert run.plan is run.plan
    back = RunPlan.from_dict(json.loads(run.plan.to_json()))
    assert back == run.plan and back.metrics == run.plan.metrics
    scoring = run.plan.scoring
    assert (scoring.scorer, scoring.target) == ("sts", "STSBenchmark.pearson")
    assert scoring.final_tasks[:5] == ("STS12", "STS13", "STS14", "STS15", "STS16")
    assert {"MR", "TREC", "MRPC"} <= set(scoring.transfer_tasks) and "STS12" not in scoring.transfer_tasks
    assert {"STS12-16.wmean", "STS.avg", "transfer.avg", "MRPC.f1"} <= set(scoring.final_metrics)


def test_each_metric_is_named_with_its_mlflow_section() -> None:
    metrics = resolve_run({"method": "scl"}).plan.metrics
    assert (
        metrics["dev.STSBenchmark.spearman"] == "dev" and metrics["dev.STSBenchmark.spearman.best"] == "dev"
    )
    assert metrics["train.steps"] == "train" and metrics["objective"] is None
    assert metrics["STS12-16.wmean"] is None  # a final score: no section


def test_every_scorer_supplies_its_part() -> None:
    heads = load_study("chen_heads", "paper").grid_runs()[0].plan
    assert heads.scoring.scorer == "multitask" and heads.scoring.target == "overall"
    assert set(heads.scoring.final_metrics) == {f"dev.{s}" for s in heads.scoring.dev_scores}
    assert heads.stages[0]["kind"] == "finetune" and heads.scoring.final_tasks == ()
    glue = load_study("supcl_seq_glue", "paper").grid_runs()[0].plan
    assert glue.scoring.scorer == "glue" and glue.scoring.target == "CoLA.mcc"
    assert glue.scoring.final_metrics == ("dev.CoLA.acc", "dev.CoLA.mcc")
    ensemble = load_study("david_ensemble", "paper").grid_runs()[0].plan
    assert ensemble.scoring.scorer == "ensemble" and ensemble.scoring.target == "overall_r01"


def test_a_studys_paper_plans_name_its_variants_and_read_back() -> None:
    plans = paper_plans(load_study("david_ucl_hyperparameters", "smoke"))
    back = PaperPlans.from_json(plans.to_json())
    assert back.variants == ("default", "lr_1.5e-5", "lr_2e-5", "dropout_0.4")
    assert back.plans is not None and {p.variant for p in back.plans} == set(back.variants)
    assert {p.params["lr"] for p in back.plans} == {1e-5, 1.5e-5, 2e-5}  # the paper profile's, not smoke's
    assert "dev.overall_r01" in back.final_metrics()


def test_the_main_metric_is_the_final_score_a_study_is_read_by() -> None:
    assert resolve_run({"method": "scl"}).plan.scoring.main_metric == "STS.avg"  # SimCSE's Avg.
    five = resolve_run({"method": "scl", "final_tasks": ["STS12", "STS13", "STS14", "STS15", "STS16"]})
    assert five.plan.scoring.main_metric == "STS12-16.wmean"
    one = resolve_run({"method": "scl", "final_tasks": ["STSBenchmark"]})
    assert one.plan.scoring.main_metric == "STSBenchmark.spearman"
    heads = load_study("chen_heads", "paper").grid_runs()[0].plan
    assert heads.scoring.main_metric == "dev.overall"
