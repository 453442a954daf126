"""Objectives: each method names one; a study may choose its dev score (`objective_metric`), which then
ranks trials and picks the checkpoint; a score the objective does not have is refused with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.objectives.registry import OBJECTIVES
from harness.run_spec import resolve_run
from harness.runner import run_study
from harness.study_spec import load_study
from harness.tracking import Tracker
from tests.helpers import child_runs, tiny_study


@pytest.mark.parametrize(
    ("fields", "objective", "default"),
    [
        ({"method": "scl"}, "sts", "STSBenchmark.spearman"),
        ({"method": "unsup_simcse"}, "sts", "STSBenchmark.spearman"),
        ({"method": "multitask"}, "multitask", "overall"),
        ({"method": "multitask", "combiner": "single", "single_task": "quora"}, "multitask", "quora.acc"),
        ({"method": "supcl_seq"}, "multitask", "sst.acc"),
        ({"method": "ensemble", "source_study": "s"}, "ensemble", "overall"),
        ({"method": "pipeline", "stages": [{"contrastive": "unsup"}]}, "sts", "STSBenchmark.spearman"),
        ({"method": "pipeline", "stages": [{"finetune": "sts"}]}, "multitask", "sts.pearson"),
    ],
)
def test_each_method_names_its_objective(fields: dict, objective: str, default: str) -> None:
    run = resolve_run(fields)
    assert run.objective is OBJECTIVES.get(objective)
    assert run.objective.metric_choices(run)[0] == default


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"method": "multitask", "objective_metric": "overall_r02"}, "choose one of overall, overall_r01,"),
        (
            {"method": "multitask", "combiner": "single", "objective_metric": "overall"},
            "choose one of sst.acc",
        ),
        ({"method": "scl", "objective_metric": "overall"}, "of the 'sts' objective of method 'scl'"),
    ],
)
def test_a_dev_score_the_objective_lacks_is_refused(fields: dict, message: str) -> None:
    with pytest.raises(HarnessError, match="^config: field 'objective_metric'") as error:
        resolve_run(fields)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_an_unknown_objective_suggests_the_closest() -> None:
    with pytest.raises(HarnessError, match="unknown objective 'multitsk'; did you mean multitask"):
        OBJECTIVES.get("multitsk")


def test_the_chosen_dev_score_ranks_the_trial_and_picks_the_checkpoint(
    tmp_path: Path, tiny_bert: Path
) -> None:
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="david-overall", method="multitask",
                      objective_metric="overall_r01", batch_size=4, max_steps=4, eval_every=1)  # fmt: skip
    study = run_study(load_study(path), progress=False)
    (run,) = child_runs("david-overall")
    history = Tracker().client.get_metric_history(run.info.run_id, "dev.overall_r01")
    *during, final = sorted(history, key=lambda m: (m.timestamp, m.step))
    assert len(during) == 4 and "dev.overall.best" not in run.data.metrics  # one per step, then the final
    best = max(m.value for m in during)
    assert run.data.metrics["dev.overall_r01.best"] == best == study.trials[0].value
    assert final.value == pytest.approx(best)  # the final scores are those of the restored best checkpoint
