"""Paper profiles run the papers' definitions (issue 9): each value below is the paper's, with its source
in the study YAML and the modules' docstrings."""

from __future__ import annotations

from torch import nn

from harness.model.heads import NLIClassifier
from harness.study_spec import load_study


def test_liao_lambda_tau_sweep_paper_profile() -> None:
    run = load_study("lambda_tau_sweep", "paper").grid_runs()[0]
    settings, params = run.settings, run.params
    assert settings.model == "google/bert_uncased_L-8_H-512_A-8"  # 4.2: 8-layer uncased BERT, hidden 512
    assert (settings.lr, settings.batch_size, settings.epochs, settings.warmup_ratio) == (2e-5, 64, 1, 0.1)
    assert settings.pooling == "mean_no_cls" and settings.keep_best is False  # 3; 4.2 one epoch, final model
    assert params.normalize is False and params.classifier == "two_linear"  # eq. 2; 3


def test_liaos_two_layer_classifier_has_no_activation() -> None:
    layers = list(NLIClassifier(512, "two_linear").net)
    assert [type(m) for m in layers] == [nn.Linear, nn.Linear]
    assert (layers[0].in_features, layers[0].out_features, layers[1].out_features) == (1536, 768, 3)


def test_supcl_seq_views_paper_profile() -> None:
    run = load_study("supcl_seq_views", "paper").grid_runs()[0]
    assert run.settings.pooling == "cls" and run.params.temperature == 0.05  # footnote 2; Table 4
    assert run.params.normalize is True and run.params.default_view is False  # footnote 2; section 2
