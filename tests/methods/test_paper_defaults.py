"""Each method's paper defaults (`Method.run_defaults`): what a study that leaves the fields unset runs,
with the paper's values (issue 22 item 1), and that a study's own value always wins."""

from __future__ import annotations

from typing import Any

import pytest

from harness.config import RunConfig
from harness.registry import METHODS
from harness.resolve.run_spec import resolve_run

# method -> (fields to give so the run resolves, the paper's values it must then run with)
EXPECTED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {  # fmt: skip
    # Liao 4.2 (model, lr, warm-up, batch, epochs), 3 (pooling without [CLS]); one epoch, final model
    "scl": (
        {},
        {
            "model": "google/bert_uncased_L-8_H-512_A-8",
            "pooling": "mean_no_cls",
            "lr": 2e-5,
            "batch_size": 64,
            "epochs": 1,
            "warmup_ratio": 0.1,
            "keep_best": False,
        },
    ),
    "sbert": (
        {},
        {"model": "google/bert_uncased_L-8_H-512_A-8", "pooling": "mean_no_cls", "keep_best": False},
    ),
    # SupCL-Seq footnote 2 (pooled [CLS]), Table 4 SST-2 row, notebook cells 10 and 16 (probe)
    "supcl_seq": (
        {},
        {
            "pooling": "cls",
            "lr": 5e-5,
            "batch_size": 320,
            "epochs": 5,
            "weight_decay": 0.01,
            "warmup_ratio": 0.0,
            "keep_best": False,
            "classifier_epochs": 5,
            "classifier_lr": 1e-3,
            "classifier_batch_size": 112,  # notebook cell 18: 28 a device x 4
            "temperature": 0.05,
            "normalize": True,
        },
    ),
    # SimCSE's scripts
    "unsup_simcse": (
        {},
        {"pooling": "cls_before_pooler", "lr": 3e-5, "batch_size": 64, "max_seq_length": 32},
    ),
    "sup_simcse": ({}, {"pooling": "cls_before_pooler", "lr": 5e-5, "batch_size": 512, "epochs": 3}),
    # the CS224N minBERT baseline: pooled [CLS], lr 1e-5, dropout 0.3, 10 epochs, batch 8, no schedule
    "multitask": (
        {},
        {
            "pooling": "cls",
            "lr": 1e-5,
            "batch_size": 8,
            "epochs": 10,
            "head_dropout": 0.3,
            "lr_schedule": "constant",
            "warmup_ratio": 0.0,
            "eval_every": "epoch",
        },
    ),
    # Phillips 4.3.1: "learning rate 1e-3 for pretrained weights" (the heads-only baseline), else minBERT's
    "frozen": ({}, {"pooling": "cls", "lr": 1e-3, "batch_size": 8, "head_dropout": 0.3, "epochs": 10}),
    # Chen's strategies: the [CLS] state, lr 1e-5, batch 16, 10 epochs, dev after each epoch, best kept (5.3);
    # head dropout not stated for them (5.3's 0.3 is the supervised heads'): the harness's 0.1
    "contrastive_first": (
        {},
        {
            "pooling": "cls_before_pooler",
            "lr": 1e-5,
            "batch_size": 16,
            "epochs": 10,
            "head_dropout": 0.1,
            "keep_best": True,
            "eval_every": "epoch",
        },
    ),
    "supervised_first": ({}, {"pooling": "cls_before_pooler", "batch_size": 16, "head_dropout": 0.1}),
    "fusion": ({}, {"pooling": "cls_before_pooler", "batch_size": 16, "head_dropout": 0.1}),
}


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_a_study_that_sets_nothing_runs_the_papers_values(method: str) -> None:
    given, paper = EXPECTED[method]
    run = resolve_run({"method": method, **given})
    flat = run.flat()
    assert {k: flat[k] for k in paper} == paper
    changed = {field for field, _, _ in run.paper_defaults}
    generic = {**RunConfig().model_dump(), **run.method.Params().model_dump()}
    assert changed == {k for k, v in run.method.run_defaults.items() if generic.get(k) != v}
    assert run.method.run_defaults_source  # every set of paper defaults names its source


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_a_studys_own_value_wins_over_the_paper_default(method: str) -> None:
    own = {"pooling": "first_last_avg", "lr": 7e-4, "batch_size": 3}
    run = resolve_run({"method": method, **own})
    assert {k: getattr(run.settings, k) for k in own} == own
    assert not {"pooling", "lr", "batch_size"} & {field for field, _, _ in run.paper_defaults}


def test_every_method_that_trains_an_encoder_has_paper_defaults() -> None:
    """A new method must say what its paper ran (or be one without a paper: pipeline, ensemble, glove)."""
    without = {"pipeline", "ensemble", "glove"}
    for name in METHODS.entries():
        assert (name in without) != bool(METHODS.get(name).run_defaults), name
    assert set(EXPECTED) == set(METHODS.entries()) - without  # and this test checks its values


# Issue 42 item 2: gradient clipping per source. Liao's loop steps right after backward (no clipping,
# Danqi7/584-final@0e40add bert_sent_embed.py:143-145); SimCSE and SupCL-Seq train with the HF Trainer
# (default max_grad_norm 1.0); the CS224N papers do not say: their starter code does not clip
# (minbert-default-final-project@7ac8260 multitask_classifier.py:165-166).
CLIPPING = {"scl": 0.0, "sbert": 0.0, "unsup_simcse": 1.0, "sup_simcse": 1.0, "supcl_seq": 1.0,
            "multitask": 0.0, "frozen": 0.0, "contrastive_first": 0.0, "supervised_first": 0.0,
            "fusion": 0.0}  # fmt: skip  # CS224N: the starter code does not clip (issue 56 item 7)


@pytest.mark.parametrize("method", sorted(CLIPPING))
def test_every_method_names_its_gradient_clipping_and_where_it_comes_from(method: str) -> None:
    cls = METHODS.get(method)
    assert cls.run_defaults["max_grad_norm"] == CLIPPING[method]
    run = resolve_run({"method": method})
    assert run.settings.max_grad_norm == CLIPPING[method]
    assert "max_grad_norm" in run.method.run_defaults_source or "clipping" in run.method.run_defaults_source
    changed = ("max_grad_norm", 0.0, 1.0) in run.paper_defaults  # printed and tagged only where it changes
    assert changed == (CLIPPING[method] != RunConfig().max_grad_norm)
    assert resolve_run({"method": method, "max_grad_norm": 0.5}).settings.max_grad_norm == 0.5  # study wins


def test_liaos_no_clipping_is_printed_and_tagged_as_a_paper_default() -> None:
    from harness.study.trial import paper_default_tags

    tags = paper_default_tags(resolve_run({"method": "scl"}))
    assert "max_grad_norm=0.0 (not 1.0)" in tags["paper_defaults"]
    assert "bert_sent_embed.py:143-145" in tags["paper_defaults.source"]


@pytest.mark.parametrize(("method", "script"), [("unsup_simcse", "run_unsup_example.sh:15-18"),
                                                ("sup_simcse", "run_sup_example.sh:26-29")])  # fmt: skip
def test_simcse_keeps_the_best_sts_b_dev_checkpoint_of_one_every_250_steps(method: str, script: str) -> None:
    """Issue 42 item 3: SimCSE appendix A, "evaluate the model every 250 training steps on the development
    set of STS-B and keep the best checkpoint" (both settings); the scripts' 125 is the option."""
    run = resolve_run({"method": method})
    assert (run.settings.eval_every, run.settings.keep_best) == (250, True)
    assert ("eval_every", 250, RunConfig().eval_every) in run.paper_defaults  # printed and tagged
    assert run.scorer.metric_choices(run)[0] == "STSBenchmark.spearman"  # SimCSE's stsb_spearman
    assert "appendix A" in run.method.run_defaults_source and script in run.method.run_defaults_source
    assert resolve_run({"method": method, "eval_every": 125}).settings.eval_every == 125  # the scripts'


def test_frozen_runs_phillips_learning_rate_for_pretrained_weights_and_names_it() -> None:
    """Issue 42 item 5: the heads-only baseline's lr is Phillips 4.3.1's 1e-3, not the fine-tuning 1e-5."""
    run = resolve_run({"method": "frozen"})
    assert run.settings.lr == 1e-3 and ("lr", 1e-3, RunConfig().lr) in run.paper_defaults
    assert "Phillips 4.3.1" in run.method.run_defaults_source and "1e-3" in run.method.run_defaults_source
    assert resolve_run({"method": "multitask"}).settings.lr == 1e-5  # fine-tuning keeps 1e-5


def test_what_the_cs224n_papers_do_not_state_is_marked_so_in_the_source() -> None:
    """Issue 42 item 7: best-dev model selection is stated by Chen 5.3 for the unsupervised settings only,
    by no paper for the minBERT baseline; Chen's dropout 0.3 (5.3) is the supervised MLP heads', so the
    three unsupervised strategies run the harness's head dropout, as `unsup_strategies` does."""
    from harness.resolve.study_spec import load_study

    minbert = METHODS.get("multitask")
    assert minbert.run_defaults["keep_best"] is True
    assert "keep_best not stated" in minbert.run_defaults_source and "Fig. 2" in minbert.run_defaults_source
    assert "not stated" in METHODS.get("frozen").run_defaults_source
    unsup = {run.params.head_dropout for run in load_study("unsup_strategies", "paper").grid_runs()}
    for name in ("contrastive_first", "supervised_first", "fusion"):
        method = METHODS.get(name)
        assert method.run_defaults["keep_best"] is True and "best kept" in method.run_defaults_source
        assert "head_dropout not stated" in method.run_defaults_source
        assert {resolve_run({"method": name}).params.head_dropout} == unsup == {0.1}


# Issue 56 item 6: AdamW's epsilon per source. Liao's code uses transformers.AdamW (default eps 1e-6,
# Danqi7/584-final@0e40add bert_sent_embed.py:274); the CS224N projects the starter code's AdamW
# (minbert-default-final-project@7ac8260 optimizer.py:14, eps 1e-6); SimCSE and SupCL-Seq the HF
# Trainer's (adam_epsilon 1e-8, PyTorch's default too).
EPSILON = {"scl": 1e-6, "sbert": 1e-6, "unsup_simcse": 1e-8, "sup_simcse": 1e-8, "supcl_seq": 1e-8,
           "multitask": 1e-6, "frozen": 1e-6, "contrastive_first": 1e-6, "supervised_first": 1e-6,
           "fusion": 1e-6}  # fmt: skip


@pytest.mark.parametrize("method", sorted(EPSILON))
def test_every_method_runs_its_papers_adamw_epsilon(method: str) -> None:
    run = resolve_run({"method": method})
    assert run.settings.adam_eps == EPSILON[method]
    assert (("adam_eps", EPSILON[method], 1e-8) in run.paper_defaults) == (EPSILON[method] != 1e-8)
    assert resolve_run({"method": method, "adam_eps": 1e-7}).settings.adam_eps == 1e-7  # the study wins


def test_the_optimizer_steps_with_the_runs_epsilon() -> None:
    import torch

    from harness.train.loop import adamw

    weights = torch.nn.Parameter(torch.zeros(2, 2))
    optimizer = adamw([weights], 1e-3, 0.0, torch.device("cpu"), eps=1e-6)
    assert all(group["eps"] == 1e-6 for group in optimizer.param_groups)


def test_every_cs224n_study_trains_with_the_starter_codes_epsilon_and_no_clipping() -> None:
    """The CS224N studies run `method: pipeline` (no paper of its own): their base names the epsilon."""
    from pathlib import Path

    import yaml

    studies = Path(__file__).resolve().parents[2] / "studies"
    cs224n = [p for p in studies.glob("*.yaml") if p.stem.startswith(("chen_", "david_"))] + [
        studies / f"{name}.yaml"
        for name in (
            "contrastive_pretraining",
            "gradient_surgery",
            "pretraining_data",
            "ucl_multitask",
            "unsup_strategies",
        )  # fmt: skip
    ]
    for path in cs224n:
        base = yaml.safe_load(path.read_text())["base"]
        if base.get("method") == "pipeline":
            assert base.get("adam_eps") == 1e-6, path.name
            assert base.get("max_grad_norm") == 0.0, path.name  # the starter code does not clip


def test_the_david_studies_run_the_starter_codes_batch_and_schedule_as_the_multitask_baseline() -> None:
    """Issue 56 item 8: where David et al. are silent (batch, schedule) their studies and the `multitask`
    method default from one source, the CS224N starter code: batch 8, no schedule; the baseline's dropout
    0.3 is the heads' (the starter code's encoder keeps BERT's own)."""
    from pathlib import Path

    import yaml

    from harness.methods.paper_defaults import MINBERT

    studies = Path(__file__).resolve().parents[2] / "studies"
    for path in [*studies.glob("david_*.yaml"), studies / "ucl_multitask.yaml"]:
        base = yaml.safe_load(path.read_text())["base"]
        if base.get("method") == "pipeline":
            assert (base["batch_size"], base["lr_schedule"]) == (
                MINBERT["batch_size"],
                MINBERT["lr_schedule"],
            )
    assert "encoder_dropout" not in MINBERT and MINBERT["head_dropout"] == 0.3


def test_every_paper_profile_trains_at_the_papers_precision() -> None:
    """Issue 56 item 9: Liao, SupCL-Seq and the CS224N projects trained in fp32 (none of their code uses
    autocast or fp16): their paper profiles set it, and a report names a run at another precision."""
    from pathlib import Path

    import yaml

    from harness.report.setting import SETTING

    for path in sorted((Path(__file__).resolve().parents[2] / "studies").glob("*.yaml")):
        study = yaml.safe_load(path.read_text())
        if study["base"].get("method") != "ensemble":
            assert study["profiles"]["paper"]["base"]["precision"] == "fp32", path.name
    assert "precision" in SETTING
