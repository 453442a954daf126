"""`unsup_simcse`: unsupervised SimCSE (Gao et al., 2021) on chosen sentences (`contrastive_data`: wiki,
sst, quora, sts, any mix); evaluated on STS. One `contrastive: unsup` stage on the run's epochs / lr /
batch_size / max_steps.

Run defaults are SimCSE's (princeton-nlp/SimCSE@49fa580 run_unsup_example.sh:11-20): the raw [CLS] state
under the MLP (`--pooler_type cls`, the MLP in training only), 1 epoch, batch 64, lr 3e-5, max length 32,
no warm-up (the Trainer's default), gradients clipped to norm 1.0 (the paper, appendix A: "We implement
SimCSE with transformers package"; its Trainer's default `max_grad_norm` 1.0, transformers 4.2.1
training_args.py:293, the version SimCSE pins in requirements.txt:1, applied in
simcse/trainers.py:473-488).

Checkpoint rule: the paper, appendix A: "evaluate the model every 250 training steps on
the development set of STS-B and keep the best checkpoint for the final evaluation on test sets. We do the
same for the unsupervised SimCSE": `eval_every: 250`, `keep_best: true`, scored by STS-B dev Spearman (the
`sts` scorer's default dev score, SimCSE's `stsb_spearman`, simcse/trainers.py:131, :157-174, :532).
The authors' scripts evaluate every 125 steps instead (run_unsup_example.sh:15-18, run_sup_example.sh:26-29:
`--evaluation_strategy steps --metric_for_best_model stsb_spearman --load_best_model_at_end --eval_steps
125`); the text decides, `eval_every: 125` runs the scripts'. The harness also scores the last step (the
Trainer only a step on the interval), so the final model is a candidate too."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.methods.params import ProjectionParams
from harness.methods.preset import CONTRASTIVE_FIELDS, Preset
from harness.registry import register_method


@register_method("unsup_simcse")
class UnsupSimCSE(Preset):
    """SimCSE's loss and projection, the sentences and their batching."""

    template = ({"contrastive": "unsup"},)
    aliases: ClassVar[dict[str, str]] = {**CONTRASTIVE_FIELDS, "contrastive_data": "contrastive.data"}
    groups = (ProjectionParams,)
    run_defaults: ClassVar[dict[str, Any]] = {
        "pooling": "cls_before_pooler", "epochs": 1, "batch_size": 64, "lr": 3e-5, "max_seq_length": 32,
        "warmup_ratio": 0.0, "max_grad_norm": 1.0, "eval_every": 250, "keep_best": True,
        "eval_max_seq_length": "model",  # the evaluation truncates nothing (evaluation.py:101-105)
    }  # fmt: skip
    run_defaults_source = (
        "princeton-nlp/SimCSE@49fa580 run_unsup_example.sh:11-20; max_grad_norm: the HF Trainer's default "
        "(transformers 4.2.1 training_args.py:293; simcse/trainers.py:473-488); eval_every 250, best STS-B "
        "dev kept: Gao et al. appendix A (the scripts: 125, run_unsup_example.sh:15-18); "
        "evaluation untruncated: "
        "evaluation.py:101-105, simcse/trainers.py:107-111 (max_seq_length 32 cuts training batches only)"
    )
