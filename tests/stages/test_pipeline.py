"""Stage pipelines written in a study YAML: each stage trains in order with its own settings, `repeat`
groups expand, the logged form reads back, and impossible stages are refused with one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.resolve.run_spec import resolve_run
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.metric_names import history, metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, harness_here, tiny_study

THREE_STAGES = [
    {"contrastive": "sup_quora", "limit": 40, "batch_size": 4, "max_steps": 2, "lr": 1e-3},
    {
        "contrastive": "unsup",
        "data": ["sst", "sts"],
        "limit": 64,
        "batch_size": 8,
        "max_steps": 3,
        "lr": 5e-4,
    },
    {"finetune": "multitask", "max_steps": 4},
]


@pytest.mark.slow
def test_three_stages_from_yaml_train_in_order_with_their_own_settings(
    tmp_path: Path, tiny_bert: Path
) -> None:
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="three-stages", method="pipeline",
                      stages=THREE_STAGES, lr=2e-5, batch_size=4, warmup_ratio=0.0,
                      eval_every=100)  # fmt: skip
    run_study(load_study(path), progress=False)
    (run,) = child_runs("three-stages")
    assert run.info.status == "FINISHED"
    client = Tracker().client
    stages = sorted(history(client, run.info.run_id, "train.stage"), key=lambda m: m.step)
    stage = [m.value for m in stages]
    lrs = {m.step: m.value for m in history(client, run.info.run_id, "train.lr")}
    assert stage == [0, 0, 1, 1, 1, 2, 2, 2, 2]  # in order, each with its own step budget
    assert metrics_of(run)["train.steps"] == 9
    # no warm-up, linear decay per stage: after a stage's first of n steps, lr * (n - 1) / n
    assert lrs[1] == pytest.approx(1e-3 * 1 / 2)
    assert lrs[3] == pytest.approx(5e-4 * 2 / 3)
    assert lrs[6] == pytest.approx(2e-5 * 3 / 4)  # the run's lr where the stage sets none
    assert "dev.overall" in metrics_of(run)  # a fine-tuning stage: scored on the CS224N dev sets
    config = client.download_artifacts(run.info.run_id, "config.yaml", str(tmp_path))
    logged = yaml.safe_load(Path(config).read_text())
    assert [list(s)[0] for s in logged["stages"]] == ["contrastive", "contrastive", "finetune"]


def test_a_contrastive_only_pipeline_is_scored_on_sts() -> None:
    run = resolve_run({"method": "pipeline", "stages": [{"contrastive": "unsup"}]})
    assert run.scorer.name == "sts" and run.method.trained_tasks(run.params, run.stages) == ()


def test_repeat_groups_expand_and_the_logged_form_reads_back() -> None:
    stages = [
        {"contrastive": "sup_nli", "epochs": 3},
        {"repeat": 2, "stages": [{"contrastive": "sup_quora"}, {"contrastive": "unsup", "data": ["sst"]}]},
        {"finetune": "sst"},
    ]
    run = resolve_run({"method": "pipeline", "stages": stages})
    expanded = list(run.stages)
    assert [(s.kind, s.variety) for s in expanded] == [
        ("contrastive", "sup_nli"),
        *[("contrastive", "sup_quora"), ("contrastive", "unsup")] * 2,
        ("finetune", "sst"),
    ]
    logged = run.flat()["stages"]
    assert logged[0] == {"contrastive": "sup_nli", "epochs": 3, "temperature": 0.05,
                         "hard_negative_weight": 0.0, "epoch_size": "all", "mixing": "pooled",
                         "length_grouping": False}  # fmt: skip
    again = resolve_run({"method": "pipeline", **run.flat()})
    assert again.params == run.params
    assert run.method.trained_tasks(run.params, run.stages) == ("sst",)


REFUSED = [
    ([{"contrastive": "unsup", "finetune": "sst"}], "a stage names exactly one kind"),
    ([{"contrastiv": "unsup"}], "a stage names exactly one kind"),
    (["unsup"], "a stage is a mapping"),
    ([{"contrastive": "unsup", "quora_negatives": False}], "'quora_negatives' is not read by a 'unsup'"),
    ([{"finetune": "sst", "combiner": "pcgrad"}], "'combiner' is not read by a single-task stage"),
    ([{"finetune": "multitask", "combiner": "single"}], "combiner 'single' is written finetune: sst"),
    ([{"finetune": "multitask", "pcgrad_reduction": "sum"}], "'pcgrad_reduction' is not read with combiner"),
    ([{"fusion": "multitask", "combiner": "pcgrad"}], "combiner 'pcgrad' cannot be used with fusion"),
    ([{"repeat": 2, "epochs": 2, "stages": [{"finetune": "sst"}]}], "'epochs' is not read by a repeat group"),
    ([{"fusion": "multitask", "heads_only": True}], "heads_only cannot be used with fusion"),
    ([{"glue": "RTE"}, {"glue": "MRPC"}], "glue stages on different tasks cannot share a pipeline"),
    ([{"glue": "RTE"}, {"finetune": "sst"}], "stages scored by different scorers (glue, multitask)"),
    ([{"contrastive": "unsup", "epoch": 3}], "unknown field 'stages[0].epoch'; did you mean epochs?"),
    ([], "stages"),
]


@pytest.mark.parametrize(("stages", "message"), REFUSED, ids=lambda x: str(x)[:40])
def test_impossible_stages_are_refused_with_one_line(stages: list, message: str) -> None:
    with pytest.raises(HarnessError, match="^config: ") as error:
        resolve_run({"method": "pipeline", "stages": stages})
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sentiment_head": "mlp"}, "'sentiment_head' is not read without a finetune or fusion stage"),
        ({"mlp_projection": False, "stages": [{"finetune": "sst"}]}, "'mlp_projection' is not read without"),
        (
            {"quora_train": "q.csv", "stages": [{"finetune": "sst"}]},
            "'quora_train' is not read without a stage",
        ),
    ],
)
def test_method_fields_no_stage_reads_are_refused(fields: dict, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        resolve_run({"method": "pipeline", "stages": [{"contrastive": "unsup"}], **fields})


def test_a_refused_stage_exits_2_with_one_line(tmp_path: Path) -> None:
    base = {"method": "pipeline", "stages": [{"fusion": "multitask", "combiner": "pcgrad"}]}
    path = tmp_path / "refused-stage.yaml"
    path.write_text(yaml.safe_dump({"name": "refused-stage", "base": base, "profiles": {"paper": {}}}))
    out = harness_here("run-study", str(path))
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "cannot be used with fusion" in out.stderr


def test_each_pass_of_a_repeat_group_shuffles_as_the_next_epochs() -> None:
    stages = [{"repeat": 3, "stages": [{"contrastive": "unsup", "epochs": 2}]}, {"finetune": "multitask"}]
    run = resolve_run({"method": "pipeline", "stages": stages})
    expanded = list(run.stages)
    assert [s.first_epoch(run.settings) for s in expanded] == [0, 2, 4, 0]
    again = resolve_run({"method": "pipeline", **run.flat()})  # read back from the logged form
    assert [s.first_epoch(again.settings) for s in list(again.stages)] == [0, 2, 4, 0]


@pytest.mark.parametrize(
    ("method", "scored"), [("contrastive_first", [False, True]), ("supervised_first", [True, True])]
)
def test_stages_before_task_training_are_not_dev_scored(method: str, scored: list[bool], tiny_bert: Path,
                                                        data_dir: Path) -> None:  # fmt: skip
    from harness.encoders.encoder import Encoder
    from harness.methods.base import DataSources

    run = resolve_run({"method": method, "model": str(tiny_bert), "contrastive_limit": 16})
    module = run.build(Encoder(str(tiny_bert), "mean", 32))
    stages = module.stages(run.settings, run.method.load_train_data(run, DataSources(data_dir)))
    assert [stage.scored for stage in stages] == scored


def test_a_fraction_draws_a_fresh_share_of_the_examples_each_epoch() -> None:
    """Chen 5.3: each epoch, 6% of Quora at random."""
    import random

    from harness.config import RunConfig
    from harness.stages.contrastive.unsup import UnsupStage

    sentences = [f"sentence {i}" for i in range(200)]
    stage = UnsupStage(data=["quora"], fraction=0.06, batch_size=4)
    built = stage.build(None, RunConfig(), sentences)
    epochs = [[s for batch in built.make_batches(random.Random(seed)) for s in batch] for seed in (0, 1)]
    assert [len(e) for e in epochs] == [12, 12] and all(len(set(e)) == 12 for e in epochs)
    assert set(epochs[0]) != set(epochs[1])


def test_phillips_positive_pairs_and_davids_shuffled_negatives(tiny_bert: Path, data_dir: Path) -> None:
    """Phillips 3.3: Quora paraphrases and STS pairs with gold >= 4 are the positives; David et al. 3.3:
    each Quora paraphrase pair gets another pair's sentence as its hard negative, never its own."""
    from harness.data.cs224n import multitask_data
    from harness.stages.contrastive import with_shuffled_negatives
    from harness.stages.contrastive.sup_quora import SupQuoraStage

    run = resolve_run(
        {"method": "pipeline", "stages": [{"contrastive": "sup_pairs"}], "model": str(tiny_bert)}
    )
    (stage,) = list(run.stages)
    assert stage.data == ["quora", "sts"]
    pairs = stage.load(run.sources(data_dir))
    tasks = multitask_data(data_dir, None)
    quora = [(a, b) for a, b, y in zip(*(tasks.quora_train.first, tasks.quora_train.second,
                                          tasks.quora_train.targets), strict=True) if y == 1]  # fmt: skip
    sts = [(a, b) for a, b, y in zip(tasks.sts_train.first, tasks.sts_train.second, tasks.sts_train.targets,
                                      strict=True) if y >= 4]  # fmt: skip
    assert pairs == quora + sts and len(quora) > 0 and len(sts) > 0

    david = SupQuoraStage(shuffled_negatives=True)
    triplets = david.load(run.sources(data_dir))
    seconds = [b for _, b, _ in triplets]
    assert [(a, b) for a, b, _ in triplets] == quora
    assert sorted(c for *_, c in triplets) == sorted(seconds)  # every negative is some pair's sentence
    distinct = with_shuffled_negatives([(f"a{i}", f"b{i}") for i in range(50)])
    assert all(c != b for _, b, c in distinct)  # ... and never the pair's own
    with pytest.raises(ValueError, match="shuffled_negatives"):
        SupQuoraStage(shuffled_negatives=True, quora_negatives=False)
