"""Paper profiles run the papers' definitions (issue 9): each value below is the paper's, with its source
in the study YAML and the modules' docstrings."""

from __future__ import annotations

from pathlib import Path

import pytest
from torch import nn

from harness.encoders.heads import NLIClassifier
from harness.resolve.study_spec import load_study


def test_liao_lambda_tau_sweep_paper_profile() -> None:
    run = load_study("lambda_tau_sweep", "paper").grid_runs()[0]
    settings, params = run.settings, run.params
    assert settings.model == "google/bert_uncased_L-8_H-512_A-8"  # 4.2: 8-layer uncased BERT, hidden 512
    assert (settings.lr, settings.batch_size, settings.epochs, settings.warmup_ratio) == (2e-5, 64, 1, 0.1)
    assert settings.pooling == "mean_no_cls" and settings.keep_best is False  # 3; 4.2 one epoch, final model
    assert params.normalize is False and params.classifier == "two_linear"  # eq. 2; 3
    # 3 is silent on these; the authors' code (994712c bert_sent_embed.py:114-168) decides
    assert params.anchors == "entailment_row" and params.draw == "random"
    # Tables 4-5 on the transfer tasks: 10 folds (the paper's text), SentEval's PyTorch classifier (the code)
    assert (settings.eval_suite, settings.transfer_preset, settings.transfer_classifier) == (
        "transfer", "default", "pytorch"
    )  # fmt: skip


def test_liaos_two_layer_classifier_has_no_activation() -> None:
    layers = list(NLIClassifier(512, "two_linear").net)
    assert [type(m) for m in layers] == [nn.Linear, nn.Linear]
    assert (layers[0].in_features, layers[0].out_features, layers[1].out_features) == (1536, 768, 3)


def test_supcl_seq_views_paper_profile() -> None:
    """SupCL-Seq Table 1 on CoLA / RTE with Table 4's lr, 5 epochs, tau 0.05, then the linear probe."""
    runs = {r.variant: r for r in load_study("supcl_seq_views", "paper").grid_runs()}
    assert len(runs) == 10 and all(r.settings.pooling == "cls" for r in runs.values())  # footnote 2
    contrastive, probe = list(runs["CoLA_5_views"].stages)
    assert contrastive.views == [0.0, 0.1, 0.2, 0.3, 0.4] and (contrastive.lr, contrastive.epochs) == (
        5e-5,
        5,
    )
    assert contrastive.temperature == 0.05 and contrastive.normalize is True  # Table 4 caption; footnote 2
    assert probe.heads_only and probe.glue == "CoLA"
    rte = list(runs["RTE_2_views_0.1"].stages)[0]
    assert rte.views == [0.1, 0.1] and rte.lr == 1e-4


def test_supcl_seq_glue_uses_table_4_per_task() -> None:
    runs = {r.variant: r for r in load_study("supcl_seq_glue", "paper").grid_runs()}
    table_4 = {"CoLA": (5e-5, 128, 5), "MRPC": (1e-4, 128, 5), "RTE": (1e-4, 48, 5), "STS-B": (1e-4, 64, 5),
               "SST-2": (5e-5, 320, 5), "WNLI": (1e-4, 320, 5), "QNLI": (5e-5, 48, 2), "QQP": (5e-5, 16, 1),
               "MNLI": (5e-5, 8, 3)}  # fmt: skip
    for task, (lr, batch, epochs) in table_4.items():  # CoLA and RTE: their `_table_4` variants
        run = runs.get(f"supcl_seq_{task}_table_4", runs[f"supcl_seq_{task}"])
        stage = list(run.stages)[0]
        assert (stage.glue_supcon, stage.lr, stage.batch_size, stage.epochs) == (task, lr, batch, epochs)
    assert runs["standard_RTE"].settings.lr == 2e-5 and runs["standard_RTE"].settings.epochs == 3


def test_supcl_seq_glue_cola_and_rte_run_table_1s_rows_of_their_table_2_scores() -> None:
    """Issue 42 item 1: Table 2's CoLA 61.2 and RTE 69.3 are Table 1's [0.0, ..., 0.4] / 800 and
    [0.0, 0.1, 0.2] / 480 rows: supcl_seq_glue runs those rows' stages, as supcl_seq_views does."""
    glue = {r.variant: r for r in load_study("supcl_seq_glue", "paper").grid_runs()}
    views = {r.variant: r for r in load_study("supcl_seq_views", "paper").grid_runs()}
    for ours, table_1 in (("supcl_seq_CoLA", "CoLA_5_views"), ("supcl_seq_RTE", "RTE_3_views")):
        assert [s.model_dump() for s in glue[ours].stages] == [s.model_dump() for s in views[table_1].stages]
        run_level = [
            r.settings.model_dump(exclude={"batch_size", "epochs", "lr"})
            for r in (glue[ours], views[table_1])
        ]
        assert run_level[0] == run_level[1]  # the stages set batch, epochs and lr
    assert list(glue["supcl_seq_CoLA"].stages)[0].batch_size == 160


def test_supcl_seq_studies_run_the_authors_loop_as_the_published_numbers_did() -> None:
    """Appendix A: implemented on the Hugging Face trainer (the authors' SupCsTrainer): its passes and its
    tau / 0.07 scale in every SupCL-Seq stage of both studies, paper and smoke profiles."""
    for name in ("supcl_seq_views", "supcl_seq_glue"):
        for profile in ("paper", "smoke"):
            for run in load_study(name, profile).grid_runs():
                for stage in list(run.stages):
                    if hasattr(stage, "glue_supcon"):
                        assert (stage.view_passes, stage.base_temperature) == ("authors_loop", 0.07)


def test_supcl_seq_probes_use_the_notebooks_total_batch_and_its_max_length() -> None:
    """Issue 42 item 4: the probe's batch is the notebook's total, 112 (28 a device x 4, cell 18's log), and
    pairs are cut where the authors cut them, at the model's 512 (`truncation=True`, notebook cell 5)."""
    for name in ("supcl_seq_views", "supcl_seq_glue"):
        runs = load_study(name, "paper").grid_runs()
        assert {run.settings.max_seq_length for run in runs} == {512}, name
        probes = [s for run in runs for s in run.stages if getattr(s, "heads_only", False)]
        assert probes and {s.batch_size for s in probes} == {112}, name
        assert {r.settings.max_seq_length for r in load_study(name, "smoke").grid_runs()} == {64}


def test_max_length_512_cuts_no_local_glue_pair_and_128_cuts_rte(data_dir: Path) -> None:
    """What 128 would cut (the bert-base-uncased tokenizer, pairs encoded jointly): RTE 304 of 2490 train
    pairs; 512 cuts none of the local tasks."""
    from transformers import AutoTokenizer

    from harness.data.glue import read_glue

    tokenizer = AutoTokenizer.from_pretrained(data_dir / "tokenizers" / "bert-base-uncased")
    for task, over_128 in (("RTE", 304), ("MRPC", 0), ("STS-B", 0), ("CoLA", 0)):
        split = read_glue(data_dir, task, "train")
        pairs = [split.first] if split.second is None else [split.first, split.second]
        lengths = [len(ids) for ids in tokenizer(*map(list, pairs))["input_ids"]]
        assert sum(n > 128 for n in lengths) == over_128 and max(lengths) <= 512, task


def test_supcl_seq_table_3_self_supervised_baseline_is_simcses_architecture() -> None:
    """3.3: "a re-implementation of Gao et al. (2021)": SimCSE's MLP over the raw [CLS] state in training
    only (not over BERT's pretrained pooler), the probe on that [CLS] state."""
    for profile in ("paper", "smoke"):
        study = load_study("supcl_seq_glue", profile)
        runs = [r for r in study.grid_runs() if "self_supervised" in r.variant]
        assert runs
        for run in runs:
            assert run.settings.pooling == "cls_before_pooler"
            params = run.params
            assert params.mlp_projection and params.projection == "simcse" and not params.mlp_at_test
            contrastive, probe = list(run.stages)
            assert contrastive.contrastive == "unsup" and probe.heads_only


def test_liao_main_rows_are_the_papers_models_at_tau_1() -> None:
    runs = {r.variant: r for r in load_study("liao_main", "paper").grid_runs()}
    assert runs["sbert_baseline"].params.lam == 0.0
    assert runs["3p3n_augment"].params.contrastive_term == "augment"
    scl = [
        r for name, r in runs.items() if name.endswith(("lambda0.1", "lambda0.3", "lambda0.5", "lambda1.0"))
    ]
    assert len(scl) == 8
    assert all(r.params.temperature == 1.0 and r.params.classifier == "two_linear" for r in scl)
    assert runs["avg_glove"].method.name == "glove"


def test_chen_paper_profiles_use_the_cls_state_and_a_two_layer_projection() -> None:
    """Chen 4.1: the hidden state of [CLS]; a 2-layer MLP in contrastive training only; 5.3: lr 1e-5,
    batch 16, temperature 0.05."""
    for study in ("unsup_strategies", "pretraining_data", "gradient_surgery", "multitask_objective"):
        for run in load_study(study, "paper").grid_runs():
            assert run.settings.pooling == "cls_before_pooler", study
            assert (run.settings.lr, run.settings.batch_size) == (1e-5, 16), study
            assert run.settings.lr_schedule == "constant", study  # 7: no schedule was used
            assert run.settings.warmup_ratio == 0.0, study
            assert run.settings.eval_every == "epoch", study  # 5.3: evaluated after each epoch
            stages = list(run.stages)
            if any(stage.needs_projection for stage in stages):
                assert run.params.projection == "simclr" and run.params.mlp_at_test is False, study
            assert all(s.temperature == 0.05 for s in stages if hasattr(s, "temperature")), study


def test_chen_table_7_fine_tunes_the_table_5_nli_before_3_given_model() -> None:
    """Table 7's average-loss row equals Table 5's "NLI before 3 Given": the same stages, two combiners."""
    table5 = load_study("pretraining_data", "paper").grid_runs()
    before = next(r for r in table5 if r.variant == "nli_before_3_given")
    runs = {r.variant: r for r in load_study("gradient_surgery", "paper").grid_runs()}
    assert runs["average"].params.stages == before.params.stages
    combiners = {v: list(r.stages)[-1].combiner for v, r in runs.items()}
    assert combiners == {"average": "average", "gradient_surgery": "pcgrad"}
    table6 = load_study("multitask_objective", "paper").grid_runs()
    assert {list(r.stages)[-1].combiner for r in table6} == {
        "average",
        "batch_round_robin",
        "epoch_round_robin",
    }
    assert {r.flat()["combiner"] for r in table6} == {"average", "batch_round_robin", "epoch_round_robin"}


def test_david_paper_profile() -> None:
    """David et al. 4.2.3 / 4.2.5 / Table 7 / 5: 10 fine-tuning epochs, lr 1e-5, dropout 0.3, 2 or 3
    pre-training epochs, models chosen on overall_r01."""
    runs = {r.variant: r for r in load_study("ucl_multitask", "paper").grid_runs()}
    for run in runs.values():
        assert (run.settings.lr, run.params.head_dropout) == (1e-5, 0.3)
        assert run.settings.objective_metric == "overall_r01"
        stages = list(run.stages)
        assert stages[-1].kind == "finetune" and stages[-1].epochs == 10
    assert [s.epochs for s in list(runs["two_datasets_multi"].stages)][:2] == [
        2,
        2,
    ]
    assert list(runs["three_datasets_multi"].stages)[0].epochs == 3


def test_glue_standard_paper_profile() -> None:
    """SupCL-Seq 3.2 "Standard" = Devlin et al.'s fine-tuning: batch 32, 3 epochs, lr from {2,3,4,5}e-5,
    10% warm-up, weight decay 0.01, max length 128, the final model."""
    runs = load_study("glue_standard", "paper").grid_runs()
    assert {r.settings.lr for r in runs} == {2e-5, 3e-5, 4e-5, 5e-5}
    for run in runs:
        s = run.settings
        assert (s.batch_size, s.epochs, s.warmup_ratio, s.weight_decay, s.max_seq_length) == (
            32,
            3,
            0.1,
            0.01,
            128,
        )
        assert s.pooling == "cls" and s.keep_best is False and s.lr_schedule == "linear"


def test_simcse_methods_default_to_simcse_settings() -> None:
    """princeton-nlp/SimCSE@49fa580 run_unsup_example.sh:11-20, run_sup_example.sh:22-32; a config's own
    value wins."""
    from harness.resolve.run_spec import resolve_run

    unsup = resolve_run({"method": "unsup_simcse"})
    s = unsup.settings
    assert (s.pooling, s.epochs, s.batch_size, s.lr, s.max_seq_length, s.warmup_ratio) == (
        "cls_before_pooler", 1, 64, 3e-5, 32, 0.0
    )  # fmt: skip
    assert unsup.params.projection == "simcse" and unsup.params.mlp_at_test is False
    sup = resolve_run({"method": "sup_simcse", "sup_data": "nli"})
    assert (sup.settings.epochs, sup.settings.batch_size, sup.settings.lr) == (3, 512, 5e-5)
    assert sup.params.mlp_at_test is True  # supervised SimCSE keeps the MLP at test
    assert resolve_run({"method": "sup_simcse"}).params.mlp_at_test is False  # Chen: Quora, thrown away
    assert resolve_run({"method": "unsup_simcse", "pooling": "mean", "lr": 1e-5}).settings.lr == 1e-5


def test_phillips_paper_profile() -> None:
    """Phillips 3.2-3.4, 4.3.1-4.3.2: pooler output, linear / linear / 5 ReLU(cos) heads, dropout 0.3,
    batch 8, per-batch round robin, baselines at 1e-3 (frozen) and 1e-5, pre-training 10 epochs at 1e-3."""
    runs = {r.variant: r for r in load_study("contrastive_pretraining", "paper").grid_runs()}
    for run in runs.values():
        s, p = run.settings, run.params
        assert (s.pooling, s.batch_size, s.lr, p.head_dropout) == ("cls", 8, 1e-5, 0.3)
        assert p.encoder_dropout == 0.3  # 3.1: attention scores and before layer normalization
        assert (p.paraphrase_head, p.similarity_head) == ("linear", "relu_cosine")
        assert run.stages[-1].combiner == "batch_round_robin"
    (frozen,) = list(runs["pretrain"].stages)
    assert frozen.heads_only and frozen.lr == 1e-3 and frozen.epochs == 10
    for name, kind in (("unsupervised", "unsup"), ("supervised", "sup_pairs")):
        first = runs[name].stages[0]
        assert (first.contrastive, first.lr, first.epochs) == (kind, 1e-3, 10)


@pytest.mark.slow
def test_every_shipped_runs_logged_config_reads_back() -> None:
    """A trial logs `config.yaml` (every field, defaults included); read back, it is the same run."""
    import yaml

    from harness.resolve.run_spec import resolve_run
    from harness.resolve.study_spec import STUDIES_DIR

    for path in sorted(STUDIES_DIR.glob("*.yaml")):
        for run in load_study(path.stem, "paper").grid_runs():
            flat = yaml.safe_load(yaml.safe_dump(run.flat(), sort_keys=False))
            variant = flat.pop("variant", None)
            again = resolve_run(flat, where=f"{path.stem} {variant}", variant=variant)
            assert again.flat() == run.flat(), (path.stem, variant)


def test_chens_3_given_rows_pre_train_at_the_lr_their_printed_number_belongs_to() -> None:
    """Issue 56 item 10: Tables 2 and 5's 3 Given (0.664) is Table 10's 2e-5 row; others keep 5.3's 1e-5."""

    def contrastive_lrs(run: object) -> set[float]:
        settings = run.settings  # type: ignore[attr-defined]
        return {s.lr or settings.lr for s in run.stages if s.kind == "contrastive"}  # type: ignore[attr-defined]

    chen = {r.variant: r for r in load_study("chen_supervised", "paper").grid_runs()}
    assert all(contrastive_lrs(chen[v]) == {2e-5} for v in chen if v.startswith("3_given"))
    data = {r.variant: r for r in load_study("pretraining_data", "paper").grid_runs()}
    assert contrastive_lrs(data["3_given"]) == {2e-5}
    assert contrastive_lrs(data["nli_before_3_given"]) == contrastive_lrs(data["nli"]) == {1e-5}
