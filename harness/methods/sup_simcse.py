"""`sup_simcse`: supervised SimCSE on Quora pairs (with or without non-paraphrase negatives, Chen) and/or
NLI triplets with contradictions as hard negatives (Gao et al., 2021): one contrastive stage per entry of
`sup_data`, in that order, each on the run's epochs / lr / batch_size / max_steps; evaluated on STS.

Run defaults are supervised SimCSE's (princeton-nlp/SimCSE@49fa580 run_sup_example.sh:22-32; 128 a device
on 4 GPUs = the paper's batch 512): the raw [CLS] state under the MLP, 3 epochs, batch 512, lr 5e-5, max
length 32, no warm-up, gradients clipped to norm 1.0 (the Trainer's default, as `unsup_simcse`). The MLP
stays at test (`mlp_at_test`) by default when NLI is trained (SimCSE's supervised model, no
`--mlp_only_train`); on Quora alone (Chen 4.1) it is thrown away. STS-B dev every 250 steps, the best
checkpoint kept (appendix A; run_sup_example.sh:26-29 evaluates every 125: `eval_every: 125`), as
`unsup_simcse`."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, Field

from harness.fields import split_commas
from harness.methods.params import ProjectionParams
from harness.methods.preset import CONTRASTIVE_FIELDS, Entries, Preset
from harness.registry import register_method

SupData = Annotated[list[Literal["quora", "nli"]], BeforeValidator(split_commas)]


@register_method("sup_simcse")
class SupSimCSE(Preset):
    """SimCSE's loss and projection, the supervised data in order, its negatives."""

    template = ({"contrastive": "sup_quora"}, {"contrastive": "sup_nli"})
    aliases: ClassVar[dict[str, str]] = {
        **CONTRASTIVE_FIELDS,
        "quora_negatives": "contrastive.quora_negatives",
        "hard_negative_weight": "contrastive.hard_negative_weight",
    }
    groups = (ProjectionParams,)
    own_fields: ClassVar[dict[str, tuple[Any, Any]]] = {
        "sup_data": (
            SupData,
            Field(
                default_factory=lambda: ["quora"],
                min_length=1,
                description='stages in order, e.g. "quora,nli"',
            ),
        )
    }
    run_defaults: ClassVar[dict[str, Any]] = {
        "pooling": "cls_before_pooler", "epochs": 3, "batch_size": 512, "lr": 5e-5, "max_seq_length": 32,
        "warmup_ratio": 0.0, "max_grad_norm": 1.0, "eval_every": 250, "keep_best": True,
        "eval_max_seq_length": "model",  # the evaluation truncates nothing (evaluation.py:101-105)
    }  # fmt: skip
    run_defaults_source = (
        "princeton-nlp/SimCSE@49fa580 run_sup_example.sh:22-32; max_grad_norm: the HF Trainer's default "
        "(transformers 4.2.1 training_args.py:293; simcse/trainers.py:473-488); eval_every 250, best STS-B "
        "dev kept: Gao et al. appendix A (the scripts: 125, run_sup_example.sh:26-29); "
        "evaluation untruncated: "
        "evaluation.py:101-105, simcse/trainers.py:107-111 (max_seq_length 32 cuts training batches only)"
    )

    @classmethod
    def entries(cls, params: BaseModel) -> Entries:
        return [{"contrastive": f"sup_{data}"} for data in params.sup_data]  # type: ignore[attr-defined]

    @classmethod
    def method_fields(cls, params: BaseModel) -> dict[str, Any]:
        """`mlp_at_test` unset: yes when NLI is trained (SimCSE's supervised model), else no."""
        fields = super().method_fields(params)
        if "mlp_at_test" not in fields:
            fields["mlp_at_test"] = params.mlp_projection and "nli" in params.sup_data  # type: ignore[attr-defined]
        return fields
