"""Paper defaults shared by several methods (`Method.run_defaults`): what a method runs with when a study
leaves a field unset. A study's own value always wins; `harness run-study` prints what these change and
tags each trial (`paper_defaults`, `paper_defaults.source`). Single-paper methods keep theirs in their
own file (unsup_simcse, sup_simcse, scl, sbert, supcl_seq).

CS224N (the minBERT default project: Chen, David et al., Phillips):

- `MINBERT`: the multi-task baseline (`multitask`, `frozen`), the starter code's settings the papers
  share: the pooled [CLS] (Phillips 3.2 "the pooler output for the [CLS] token"), lr 1e-5 and dropout 0.3
  ("the default values from MinBert", David et al. 4.2.5; Phillips 4.3.1 "Dropout was set to .3"; `frozen`
  runs lr 1e-3 instead, Phillips 4.3.1 "learning rate 1e-3 for pretrained weights", in its own file),
  10 epochs (Chen 5.3, David et al. 4.2.3, Phillips 4.3.1), batch 8 (Phillips 4.3.1), Adam without a
  schedule (Phillips 4.3.1 "the default parameters for the Adam optimizer"; Chen 7: none used), evaluated
  after each epoch (David et al. Fig. 2: dev accuracy "over the 10 epochs of multitask training"). Which
  weights are scored is not stated for this baseline (Chen 5.3 says "the parameters giving the best dev
  accuracy are saved" for its unsupervised settings only): `keep_best: true` is the harness's choice,
  inferred from the CS224N starter code the papers build on, which saves the model whenever dev accuracy
  improves and tests that one (gpoesia/minbert-default-final-project@7ac8260 `multitask_classifier.py:176-178,
  :187`). Where the papers say nothing the starter code decides, one source for every unstated setting
  (issue 56 item 8): batch 8 (`multitask_classifier.py:229`), no lr schedule (`:145`), no clipping, AdamW
  eps 1e-6 (below); the David et al. studies, which state neither batch nor schedule, run the same. Its
  dropout 0.3 (`:230` `--hidden_dropout_prob`) is the students' layers' (`:133`: the model config, read by
  the heads), while the encoder, `BertModel.from_pretrained('bert-base-uncased')` (`:48`), keeps BERT's
  own 0.1: so the baseline's `head_dropout` is 0.3 and `encoder_dropout` the model's. Phillips' "dropout
  to both attention scores and before layer normalization, with a dropout probability of .3" (3.1) is his
  own change, run by his study (`contrastive_pretraining`: `encoder_dropout: 0.3`), not by this baseline.
- `CHEN_STRATEGIES`: Chen's three unsupervised strategies (`contrastive_first`, `supervised_first`,
  `fusion`; Chen 4.2): the [CLS] hidden state (4.1 "hidden state of the [CLS] token"), lr 1e-5 and batch
  16 (5.3), 10 epochs (5.3), no schedule (7), dev after each epoch and the best kept (5.3: "In unsupervised
  settings ... the parameters giving the best dev accuracy are saved"). Head dropout is not stated for
  these settings (5.3's "dropout probability of 0.3 at each linear layer" is the supervised settings' MLP
  heads): the harness's 0.1, as `unsup_strategies` runs.

Gradient clipping is not stated by any of the three papers (and none published code): `max_grad_norm: 0`,
no clipping, as the CS224N starter code they build on, whose loop steps right after the backward pass
(gpoesia/minbert-default-final-project@7ac8260 `multitask_classifier.py:165-166`); the same code is the
source of `keep_best` above, so one source decides both (issue 56 item 7; the harness clipped at 1.0
before). `max_grad_norm: 1.0` is the option (Hugging Face Trainer's default).

AdamW's epsilon is 1e-6 for all three (`adam_eps`): the CS224N projects implement and train with the
starter code's AdamW (gpoesia/minbert-default-final-project@7ac8260 `optimizer.py:14` `eps: float = 1e-6`,
`multitask_classifier.py:145` `AdamW(model.parameters(), lr=lr)`), where PyTorch's default is 1e-8.
"""

from __future__ import annotations

from typing import Any

CS224N_COMMON: dict[str, Any] = {
    "lr": 1e-5, "epochs": 10, "warmup_ratio": 0.0, "lr_schedule": "constant", "eval_every": "epoch",
    "max_grad_norm": 0.0,  # not stated: the starter code does not clip (multitask_classifier.py:165-166)
    "adam_eps": 1e-6,  # the starter code's AdamW (optimizer.py:14), which the three projects train with
}  # fmt: skip

MINBERT: dict[str, Any] = {
    "pooling": "cls", "batch_size": 8, "head_dropout": 0.3,
    "keep_best": True,  # not stated: the harness's choice (the CS224N starter code keeps the best dev model)
    **CS224N_COMMON,
}  # fmt: skip
MINBERT_SOURCE = (
    "David et al. 4.2.5 (lr, dropout), Fig. 2 (dev each epoch); Phillips 3.2, 4.3.1 (pooler, 10 epochs, "
    "batch 8, Adam); keep_best not stated (harness: best dev kept, as the CS224N starter code); "
    "max_grad_norm not stated (0: the starter code does not clip, multitask_classifier.py:165-166); "
    "adam_eps 1e-6: "
    "gpoesia/minbert-default-final-project@7ac8260 optimizer.py:14"
)

CHEN_STRATEGIES: dict[str, Any] = {
    "pooling": "cls_before_pooler", "batch_size": 16, "keep_best": True,
    "head_dropout": 0.1,  # not stated for the unsupervised settings: the harness's (5.3's 0.3 is supervised)
    **CS224N_COMMON,
}  # fmt: skip
CHEN_SOURCE = (
    "Chen 4.1 ([CLS] state), 5.3 (lr 1e-5, batch 16, 10 epochs, dev each epoch, best kept), 7; "
    "head_dropout not stated (harness 0.1; 5.3's 0.3 is the supervised heads'); "
    "max_grad_norm not stated (0: the starter code does not clip, multitask_classifier.py:165-166); "
    "adam_eps 1e-6: "
    "gpoesia/minbert-default-final-project@7ac8260 optimizer.py:14"
)
