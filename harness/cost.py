"""`harness plan STUDY`: what a study costs before it runs, per trial and in total, on the device at hand.

Per trial, from the trial's own stages built over its own data (the loop's `Stage`s, so the counts are the
loop's): each stage's steps, min(epochs x batches per epoch, max_steps); its dev evaluations (a scored stage
every `eval_every` steps or epoch and at its end; the last stage always at its end), each encoding the
objective's dev texts; the final evaluation's texts (STS12-16, STS-B, SICK-R and any transfer tasks; none
where the final evaluation is a dev pass: the kept checkpoint was dev-evaluated and the trial's embedding
cache holds its embeddings). Then

    seconds = sum over stages of steps x t_step(stage) + (evaluations x dev tokens + final tokens) x t_token

with t_step and t_token (the encoding's seconds per token) measured here, a short calibration on the device at
hand: a few real training steps of each distinct stage (its model, max length, precision, data and loss; AdamW
and clipping as the loop does them), after one untimed warm-up step, and the encoding of up to `ENCODE_SAMPLE`
dev texts and as many final texts (per token, each set its own: the final STS sentences are shorter than STS-B
dev's). On a CPU a step is timed on at most `CPU_ROWS` examples of the batch and scaled by the batch's size
(CPU time grows with the tokens); on a GPU the whole batch is timed. A trial whose weights are not here runs
on a randomly initialised model of the same config (known: bert-base-uncased,
google/bert_uncased_L-8_H-512_A-8; `harness.model.standin`); full SNLI from the hub is counted at its
published size, its shapes timed on the local SNLI dev/test pairs. Not timed: the transfer tasks' classifier
fits (counted and named in the notes), tokenization, MLflow logging, process start-up. Calibrations are shared
between trials whose shapes agree: the stage, model, lengths and every integer, text or list field (a
temperature or a weight changes no shape, a batch size or a head does).

Nothing is written to the tracking store or the Optuna storage."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from harness.device import DTYPES, resolve_precision
from harness.errors import HarnessError
from harness.run_spec import ResolvedRun

ENCODE_SAMPLE = 512
CPU_ROWS = 64
SNLI_TRAIN_PAIRS = 549_367  # stanfordnlp/snli train: 550,152 pairs, 785 without a gold label (dropped)


@dataclass
class StageCost:
    name: str
    steps: int
    evaluations: int
    step_seconds: float


@dataclass
class TrialCost:
    """One trial's work and its estimated seconds on the calibrated device."""

    stages: list[StageCost] = field(default_factory=list)
    dev_texts: int = 0
    final_texts: int = 0
    dev_seconds: float = 0.0  # one dev evaluation's encoding
    final_seconds: float = 0.0  # the final evaluation's encoding
    notes: list[str] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return sum(s.steps for s in self.stages)

    @property
    def evaluations(self) -> int:
        return sum(s.evaluations for s in self.stages)

    @property
    def train_seconds(self) -> float:
        return sum(s.steps * s.step_seconds for s in self.stages)

    @property
    def eval_seconds(self) -> float:
        return self.evaluations * self.dev_seconds + self.final_seconds

    @property
    def seconds(self) -> float:
        return self.train_seconds + self.eval_seconds


def evaluations(total: int, per_epoch: int, eval_every: int | str, scored: bool, last: bool) -> int:
    """Dev evaluations of a stage of `total` steps (harness.train.loop.evaluates_now)."""
    if not scored:
        return 1 if last else 0
    every = per_epoch if eval_every == "epoch" else int(eval_every)
    return total // every + (1 if total % every else 0)


def shape_key(value: Any) -> Any:
    """What of a configuration sets the shapes and the work of a step: everything but float values."""
    if isinstance(value, dict):
        return tuple(sorted((k, shape_key(v)) for k, v in value.items() if not isinstance(v, float)))
    if isinstance(value, list | tuple):
        return tuple(shape_key(v) for v in value)
    return value


def fewer_rows(batch: Any, rows: int) -> tuple[Any, float]:
    """The batch cut to `rows` examples (per task for a multi-task step) and the factor back to its size."""
    if isinstance(batch, dict):
        cut = {task: list(ids)[:rows] for task, ids in batch.items()}
        full, kept = sum(len(v) for v in batch.values()), sum(len(v) for v in cut.values())
        return cut, full / max(kept, 1)
    if isinstance(batch, list):
        return batch[:rows], len(batch) / max(len(batch[:rows]), 1)
    return batch, 1.0


def time_stage(model: torch.nn.Module, stage: Any, run: ResolvedRun, device: torch.device,
               amp_dtype: torch.dtype | None, steps: int) -> float:  # fmt: skip
    """Seconds per training step of `stage`: `steps` real steps after one warm-up step (see the module
    docstring for the CPU's cut batches)."""
    from transformers import get_constant_schedule

    from harness.train.loop import adamw, train_step

    params = stage.trainable() if stage.trainable else [p for p in model.parameters() if p.requires_grad]
    optimizer = adamw(params, stage.lr, run.settings.weight_decay, device)
    scheduler = get_constant_schedule(optimizer)
    scaler = torch.amp.GradScaler(device.type) if amp_dtype == torch.float16 else None
    batches = stage.make_batches(random.Random(run.settings.seed))
    if not batches:
        raise HarnessError(f"stage {stage.name}: the training set is empty; check its data fields")
    seconds, factors = [], []
    for number in range(steps + 1):
        batch, factor = batches[number % len(batches)], 1.0
        if device.type == "cpu":
            batch, factor = fewer_rows(batch, CPU_ROWS)
        _sync(device)
        start = time.perf_counter()
        train_step(stage, batch, params, optimizer, scheduler, scaler, run.settings, device, amp_dtype)
        _sync(device)
        if number:  # the first step warms up (allocations, kernels)
            seconds.append(time.perf_counter() - start)
            factors.append(factor)
    return sum(s * f for s, f in zip(seconds, factors, strict=True)) / len(seconds)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Calibrator:
    """Times stages and encoding on one device, once per shape (see `shape_key`); each run under the
    precision it would train in there (`precision: auto` resolved for the device, harness.device)."""

    def __init__(self, device: torch.device, steps: int = 2) -> None:
        self.device, self.steps = device, steps
        self.step_seconds: dict[Any, float] = {}
        self.per_token: dict[Any, float] = {}
        self.token_counts: dict[Any, int] = {}

    def tokens(self, encoder: Any, texts: list[str]) -> int:
        """`tokens`, once per tokenizer, max length and text list (trials share their evaluation sets)."""
        key = (encoder.source, encoder.max_length, len(texts), hash(tuple(texts)))
        if key not in self.token_counts:
            self.token_counts[key] = tokens(encoder, texts)
        return self.token_counts[key]

    def stage_seconds(self, key: Any, measure: Callable[[], float]) -> float:
        if key not in self.step_seconds:
            self.step_seconds[key] = measure()
        return self.step_seconds[key]

    def token_seconds(self, key: Any, measure: Callable[[], float]) -> float:
        if key not in self.per_token:
            self.per_token[key] = measure()
        return self.per_token[key]


def stand_in_data(run: ResolvedRun, data_dir: Path) -> tuple[ResolvedRun, float, str | None]:
    """Full SNLI from the hub is counted at its published size and timed on the local pairs: (the run to
    load, the factor from the local SNLI to the real one for the stages that read it, a note)."""
    if run.nli.train_data != "snli_hub" or not reads_nli(run):
        return run, 1.0, None
    local = replace(run, nli=run.nli.model_copy(update={"train_data": "snli_local", "train_limit": None}))
    pairs = sum(len(group.hypotheses) for group in local.sources(data_dir).nli_groups())
    real = min(SNLI_TRAIN_PAIRS, run.nli.train_limit or SNLI_TRAIN_PAIRS)  # a limit counts groups: a bound
    note = f"full SNLI from the hub: counted at {real:,} labelled pairs, timed on the local SNLI pairs"
    return local, real / pairs, note


def reads_nli(run: ResolvedRun, index: int | None = None) -> bool:
    """Whether the run (or its stage `index`) trains on SNLI."""
    if not run.stages:
        return run.method.name in ("scl", "sbert")
    stages = run.stages if index is None else run.stages[index : index + 1]
    return any(s.variety == "sup_nli" for s in stages)


def trial_cost(run: ResolvedRun, data_dir: Path, calibrator: Calibrator) -> TrialCost:
    """The trial's stages, evaluations and estimated seconds (see the module docstring)."""
    from harness.evaluate.suite import SentenceEncoder
    from harness.methods.base import DataSources
    from harness.model.encoder import Encoder
    from harness.model.standin import local_model

    cost = TrialCost()
    if not run.method.trains:
        cost.notes.append("trains nothing")
        return cost
    loaded, factor, note = stand_in_data(run, data_dir)
    if note:
        cost.notes.append(note)
    model_dir, model_note = local_model(run.settings.model, data_dir)
    if model_note:
        cost.notes.append(model_note)
    built = replace(loaded, settings=loaded.settings.model_copy(update={"model": model_dir}))
    data = built.method.load_train_data(built, DataSources(data_dir))
    s = built.settings
    amp_dtype = DTYPES[resolve_precision(calibrator.device, s.precision)]
    torch.manual_seed(s.seed)
    encoder = Encoder(model_dir, s.pooling, s.max_seq_length) if built.method.needs_encoder else None
    model = built.build(encoder).to(calibrator.device).train()
    stages = model.stages(s, data)
    shapes = (s.model, s.pooling, s.max_seq_length, str(amp_dtype), built.method.name)
    params = shape_key(run.params.model_dump(mode="json"))
    for index, stage in enumerate(stages):
        scale = factor if reads_nli(run, index if run.stages else None) else 1.0
        per_epoch = math.ceil(len(stage.make_batches(random.Random(s.seed + stage.first_epoch))) * scale)
        total = per_epoch * stage.epochs
        total = min(total, stage.max_steps) if stage.max_steps else total
        spec = shape_key(run.stages[index].model_dump(mode="json")) if run.stages else stage.name
        key = (shapes, params, spec, s.batch_size, index if not run.stages else None)
        seconds = calibrator.stage_seconds(
            key,
            lambda st=stage: time_stage(
                model, st, built, calibrator.device, amp_dtype, calibrator.steps
            ),  # fmt: skip
        )
        last = index == len(stages) - 1
        evals = evaluations(total, per_epoch, s.eval_every, stage.scored, last)
        cost.stages.append(StageCost(stage.name, total, evals, seconds))
    objective = built.objective
    dev = objective.dev_texts(built, data_dir)
    final = objective.final_texts(built, data_dir)
    # a final evaluation that is a dev pass scores the kept checkpoint, whose dev embeddings the trial's
    # cache holds (it was dev-evaluated: the best, or the last stage's end): nothing is encoded again
    cost.dev_texts, cost.final_texts = len(dev), (len(final) if final is not None else 0)
    embedder = model.eval_encoder()
    if embedder is not None and encoder is not None:
        encode = SentenceEncoder(embedder, s.eval_batch_size, amp_dtype)

        def per_token(texts: list[str], which: str) -> float:
            """Seconds per token on a sample of these texts (a set's lengths set its batches' shapes)."""
            sample = random.Random(0).sample(texts, min(ENCODE_SAMPLE, len(texts)))
            key = (shapes[:4], s.eval_batch_size, params, which, len(texts))
            return calibrator.token_seconds(key, lambda: _token_seconds(encode, encoder, model, sample,
                                                                        calibrator))  # fmt: skip

        cost.dev_seconds = calibrator.tokens(encoder, dev) * per_token(dev, "dev")
        if final:
            cost.final_seconds = calibrator.tokens(encoder, final) * per_token(final, "final")
    transfer = [t for t in _final_task_names(built) if t not in _sts_names()]
    if transfer:
        cost.notes.append(
            f"{len(transfer)} transfer task(s) ({', '.join(transfer)}): classifier fits not timed"
        )
    return cost


def tokens(encoder: Any, texts: list[str]) -> int:
    """The tokens of `texts` as the encoder reads them (truncated at its max length)."""
    if not texts:
        return 0
    ids = encoder.tokenizer(texts, truncation=True, max_length=encoder.max_length)["input_ids"]
    return sum(len(row) for row in ids)


def _token_seconds(encode: Any, encoder: Any, model: torch.nn.Module, sample: list[str],
                   calibrator: Calibrator) -> float:  # fmt: skip
    """Seconds per token of an evaluation's encoding, in eval mode: the second pass over the sample (the
    first tokenizes it; a trial's token ids are cached after its first evaluation, harness.model.tokens)."""
    was = model.training
    model.eval()
    try:
        encode(sample)
        _sync(calibrator.device)
        start = time.perf_counter()
        encode(sample)
        _sync(calibrator.device)
        return (time.perf_counter() - start) / max(tokens(encoder, sample), 1)
    finally:
        model.train(was)


def _final_task_names(run: ResolvedRun) -> list[str]:
    if run.objective.name != "sts":
        return []
    from harness.objectives.sts import final_tasks

    return final_tasks(run.settings.eval_suite, run.settings.final_tasks)


def _sts_names() -> tuple[str, ...]:
    from harness.evaluate.sts import STS_TASKS

    return tuple(STS_TASKS)
