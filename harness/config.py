"""The settings every run shares (`RunConfig`), and how a validation error becomes one line.

A method's own fields live in its `Params` (harness/methods/), the SNLI source in
`harness.data.train_sets.NLISource`; `harness.run_spec.resolve_run` splits a flat dict between the three.
This module imports no method, so anything may import it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.choices import Pooling, Precision, TextVariant
from harness.errors import HarnessError


class RunConfig(BaseModel):
    """Fields every method shares (the method's own fields are its `Params`)."""

    model_config = ConfigDict(extra="forbid")

    method: str = "scl"
    model: str = Field("bert-base-uncased", description="hub id, local directory or all-MiniLM-L6-v2")
    pooling: Pooling = Field(
        "model",
        description="model: the model's own sentence-transformers pipeline (its Pooling mode, then Normalize "
        "if listed; mean without modules); or the harness's pooling alone: mean, cls, cls_before_pooler, ...",
    )
    max_seq_length: int = Field(128, gt=0)
    batch_size: int = Field(64, gt=0, description="sentence pairs per step")
    lr: float = Field(2e-5, gt=0)
    weight_decay: float = Field(0.0, ge=0)
    epochs: int = Field(1, gt=0)
    max_steps: int | None = Field(None, gt=0, description="stop after this many steps (step budget)")
    warmup_ratio: float = Field(0.1, ge=0, lt=1)
    lr_schedule: Literal["linear", "constant"] = Field(
        "linear", description="after warm-up: linear decay to 0 per stage, or constant (no schedule)"
    )
    max_grad_norm: float = Field(1.0, ge=0, description="gradient clipping; 0 disables")
    eval_every: Annotated[int, Field(gt=0)] | Literal["epoch"] = Field(
        1000,
        description="dev evaluations every N steps of a stage, or at the end of each epoch ('epoch'); "
        "always at the end of a stage",
    )
    keep_best: bool = Field(True, description="evaluate the checkpoint with the best dev score")
    objective_metric: str | None = Field(
        None, description="the dev score that ranks trials and checkpoints; unset: the objective's default"
    )
    eval_suite: str = Field(
        "sts",
        description="final evaluation of runs scored on embeddings, beside STS: a suite (sts, transfer, "
        "full) or a comma list of tasks (see `harness tasks`)",
    )
    final_tasks: list[str] | None = Field(
        None,
        description="runs scored on embeddings (STS): the tasks scored at the end instead of STS12-16, STS-B "
        "and SICK-R plus eval_suite, e.g. [STSBenchmark] or [quick] (a suite's name; see `harness tasks`); "
        "for quick iteration on an own study: paper profiles score the paper's tasks",
    )
    transfer_classifier: Literal["sklearn", "pytorch", "pytorch_adam"] = Field(
        "sklearn",
        description="transfer tasks' logistic regression: scikit-learn, or SentEval's PyTorch one (Liao), "
        "fitted on the trial's device (CUDA on a GPU worker, as SentEval runs it)",
    )
    transfer_preset: Literal["prototyping", "default"] = Field(
        "prototyping", description="SentEval's k: 5 or 10"
    )
    save_embeddings: bool = Field(
        False,
        description="save the final model's SST dev embeddings (sst_dev_embeddings.npy) for projections",
    )
    train_eval_size: int | None = Field(
        None,
        gt=0,
        description="at each evaluation also score this many training examples per task (a fixed random "
        "draw), logged as train_set.* (CS224N objective; David et al. Figs. 2-3)",
    )
    save_model: bool = Field(
        False,
        description="save the evaluated weights as the artifact `model/` (safetensors, sentence-transformers "
        "layout where the pooling has one) for `harness eval --model <downloaded folder>`",
    )
    stage_cache: bool = Field(
        False,
        description="reuse leading training stages another trial trained with the same inputs (weights, RNG "
        "and counters from a content-addressed cache; identical results), and store this run's",
    )
    stage_cache_dir: str | None = Field(
        None,
        description="the stage cache's folder (shared by workers); unset: HARNESS_STAGE_CACHE, else "
        ".harness/stage-cache",
    )
    stage_cache_mlflow: bool = Field(
        False,
        description="also share stage cache entries as MLflow artifacts (workers that share a tracking "
        "server but no folder)",
    )
    stage_cache_max_gb: float = Field(
        0, ge=0, description="size limit of the stage cache; least recently used entries go first; 0: none"
    )
    log_every: int = Field(10, gt=0)
    eval_batch_size: int = Field(128, gt=0)
    text_variant: TextVariant = "senteval"
    precision: Precision = "auto"
    device: str = "auto"
    seed: int = 42


def one_line_error(error: ValidationError, where: str) -> HarnessError:
    """The first validation error as `where: field 'x': message (got value)`; a check across fields
    (a model validator) as `where: message`."""
    first = error.errors()[0]
    if not first["loc"]:
        return HarnessError(f"{where}: {first['msg'].removeprefix('Value error, ')}")
    field = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return HarnessError(f"{where}: field '{field}': {message} (got {first.get('input')!r})")
