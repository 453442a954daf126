"""`supcl_seq`: SupCL-Seq (Sedghamiz et al., 2021). Stage 1: supervised contrastive loss (Khosla et al.,
SupCL-Seq eq. 2) over dropout views of each SST sentence, sentences of the same sentiment as positives,
tau 0.05, on the pooled [CLS] embedding L2-normalised (footnote 2; the authors' code the same,
hooman650/SupCL-Seq@320440f src/SupCsTrainer.py:69, :91). Stage 2: the encoder is frozen and a linear
classifier is trained with cross-entropy (section 2). Scored on SST-5 dev.

Views: the paper forwards the batch N times, one view per listed dropout probability (section 2, Fig. 1:
N = 2 with p = 0 and p = 0.1; the code's own docstring, SupCsTrainer.py:34, says the same). The
authors' loop makes other passes (one at the current dropout first; an entry equal to the default 0.1
keeps the dropout set last, SupCsTrainer.py:66-94): `view_passes: authors_loop` reproduces them. Its
loss is also scaled by tau / 0.07 (`base_temperature: 0.07`; see harness.losses.supcon). The views and
their fields are harness.encoders.dropout_views, shared with the `glue_supcon` stage kind (SupCL-Seq on GLUE).

Run defaults (`run_defaults`): the pooled [CLS] (footnote 2; SupCsTrainer.py:69 `pooler_output`), 5 epochs
with Table 4's SST-2 row (lr 5e-5, batch 320; its caption: 5 epochs), weight decay 0.01 and no warm-up
ratio (the authors' notebook examples/glue_bert_base.ipynb cell 10 warms up 50 steps, which have no
ratio), gradients clipped to norm 1.0 (Appendix A: "implemented on top of the Huggingface's trainer";
SupCsTrainer.py:23 subclasses it, overriding compute_loss, :50; the notebook's TrainingArguments, cells 10
and 16, leave `max_grad_norm` at the Trainer's default 1.0), the final model (no model selection is
described). The probe as the notebook trains it (cell 16):
lr 1e-3, 5 epochs; batch 112, the notebook's total (28 per device on 4 devices, cell 18's log "Total train
batch size ... = 112"; `classifier_batch_size`, None for the run's batch); its head the classifier
AutoModelForSequenceClassification puts on the pooler, dropout 0.1 and one linear layer."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from harness.encoders.dropout_views import DropoutViewFields
from harness.methods.params import SentimentHeadParams
from harness.methods.tasks import TaskMethod
from harness.registry import register_method


class SupCLSeqParams(SentimentHeadParams, DropoutViewFields):
    classifier_epochs: int = Field(5, gt=0, description="the probe's epochs (the authors' notebook, cell 16)")
    classifier_lr: float = Field(1e-3, gt=0, description="the probe's lr (the authors' notebook, cell 16)")
    classifier_batch_size: int | None = Field(
        112, gt=0, description="the probe's batch (the notebook's total, cell 18); None: the run's batch"
    )


@register_method("supcl_seq")
class SupCLSeq(TaskMethod):
    Params = SupCLSeqParams
    model = "supcl_seq"
    run_defaults: ClassVar[dict[str, Any]] = {
        "pooling": "cls", "lr": 5e-5, "batch_size": 320, "epochs": 5, "weight_decay": 0.01,
        "warmup_ratio": 0.0, "keep_best": False, "max_grad_norm": 1.0,
    }  # fmt: skip
    run_defaults_source = (
        "SupCL-Seq footnote 2, Table 4 (SST-2); hooman650/SupCL-Seq@320440f src/SupCsTrainer.py:69, "
        "examples/glue_bert_base.ipynb cells 10, 16; max_grad_norm: the HF Trainer's default (Appendix A)"
    )

    @classmethod
    def trained_tasks(cls, params: Any, stages: tuple[Any, ...]) -> tuple[str, ...]:
        return ("sst",)
