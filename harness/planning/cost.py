"""`harness plan STUDY`: what a study costs before it runs, per trial and in total, on the device at hand.

Per trial, from the trial's own stages built over its own data (the loop's `Stage`s, so the counts are the
loop's): each stage's steps, min(epochs x batches per epoch, max_steps); its dev evaluations (a scored stage
every `eval_every` steps or epoch and at its end; the last stage always at its end), each encoding the
scorer's dev texts; the final evaluation's texts (STS12-16, STS-B, SICK-R and any transfer tasks; none
where the final evaluation is a dev pass: the kept checkpoint was dev-evaluated and the trial's embedding
cache holds its embeddings). Then

    seconds = sum over stages of steps x t_step(stage) + (evaluations x dev tokens + final tokens) x t_token

with t_step and t_token (the encoding's seconds per token) measured here, a short calibration on the device at
hand: a few real training steps of each distinct stage (its model, max length, precision, data and loss; AdamW
and clipping as the loop does them), after one untimed warm-up step, and the encoding of up to `ENCODE_SAMPLE`
dev texts and as many final texts (per token, each set its own: the final STS sentences are shorter than STS-B
dev's). On a CPU a step is timed on at most `CPU_ROWS` examples of the batch and scaled by the batch's size
(CPU time grows with the tokens); on a GPU the whole batch is timed. A trial whose weights are not here runs
on a randomly initialised model of the same config (known: bert-base-uncased, all-MiniLM-L6-v2,
google/bert_uncased_L-8_H-512_A-8; `harness.encoders.standin`); full SNLI from the hub is counted at its
published size, its shapes timed on the local SNLI dev/test pairs. The transfer tasks' classifier fits are
timed too, on random embeddings of the trial's width (harness.planning.transfer_cost). Not timed:
tokenization, MLflow logging, process start-up. Calibrations are shared
between trials whose shapes agree: the stage, model, lengths and every integer, text or list field (a
temperature or a weight changes no shape, a batch size or a head does).

Nothing is written to the tracking store or the Optuna storage; the timings are kept per machine for the
next plan (harness.planning.calibration_cache)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from harness.device import DTYPES, resolve_precision
from harness.errors import HarnessError
from harness.planning.calibration_cache import CalibrationCache
from harness.planning.transfer_cost import fit_seconds
from harness.resolve.run_spec import ResolvedRun

if TYPE_CHECKING:
    from harness.networks.base import MethodModel

ENCODE_SAMPLE = 512
CPU_ROWS = 64
SNLI_TRAIN_PAIRS = 549_367  # stanfordnlp/snli train: 550,152 pairs, 785 without a gold label (dropped)


@dataclass
class StageCost:
    name: str
    steps: int
    evaluations: int
    step_seconds: float
    compile_seconds: float = 0.0  # compiling its graphs (a compiled encoder: one per length bucket)


@dataclass
class TrialCost:
    """One trial's work and its estimated seconds on the calibrated device."""

    stages: list[StageCost] = field(default_factory=list)
    dev_texts: int = 0
    final_texts: int = 0
    dev_seconds: float = 0.0  # one dev evaluation's encoding
    final_seconds: float = 0.0  # the final evaluation's encoding
    fit_seconds: float = 0.0  # its transfer tasks' classifier fits (harness.planning.transfer_cost)
    notes: list[str] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return sum(s.steps for s in self.stages)

    @property
    def evaluations(self) -> int:
        return sum(s.evaluations for s in self.stages)

    @property
    def train_seconds(self) -> float:
        return sum(s.steps * s.step_seconds + s.compile_seconds for s in self.stages)

    @property
    def eval_seconds(self) -> float:
        return self.evaluations * self.dev_seconds + self.final_seconds + self.fit_seconds

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
               amp_dtype: torch.dtype | None, steps: int, cut_on_cpu: bool = True,
               compiling: dict[str, float] | None = None) -> float:  # fmt: skip
    """Seconds per training step of `stage`: `steps` real steps after one warm-up step (see the module
    docstring for the CPU's cut batches; `cut_on_cpu=False` times whole batches there too, as bench/ does).
    A compiled encoder (harness.encoders.compiled) first runs every timed batch once untimed, so that its
    graphs are compiled before the timing; `compiling`, when given, gets `seconds`: what compiling one
    batch shape cost (those warm-up steps beyond a compiled step's time, each taken as one shape)."""
    from transformers import get_constant_schedule

    from harness.train.loop import adamw, train_step

    params = stage.trainable() if stage.trainable else [p for p in model.parameters() if p.requires_grad]
    optimizer = adamw(params, stage.lr, run.settings.weight_decay, device, run.settings.adam_eps)
    scheduler = get_constant_schedule(optimizer)
    scaler = torch.amp.GradScaler(device.type) if amp_dtype == torch.float16 else None
    batches = stage.make_batches(random.Random(run.settings.seed))
    if not batches:
        raise HarnessError(f"stage {stage.name}: the training set is empty; check its data fields")
    if stage.remember is not None:  # tokenized ahead, as the loop does (not timed: once a stage)
        stage.remember(batches[: steps + 1])
    chosen = [batches[number % len(batches)] for number in range(steps + 1)]
    if device.type == "cpu" and cut_on_cpu:
        chosen, factors = map(list, zip(*(fewer_rows(batch, CPU_ROWS) for batch in chosen), strict=True))
    else:
        factors = [1.0] * len(chosen)

    def step(batch: Any) -> float:
        _sync(device)
        start = time.perf_counter()
        train_step(stage, batch, params, optimizer, scheduler, scaler, run.settings, device, amp_dtype)
        _sync(device)
        return time.perf_counter() - start

    compiled = any(getattr(m, "compiled", None) is not None for m in model.modules())
    warm = [step(batch) for batch in (chosen if compiled else chosen[:1])]  # allocations, kernels, graphs
    seconds = [step(batch) for batch in chosen[1:]]
    per_step = sum(s * f for s, f in zip(seconds, factors[1:], strict=True)) / len(seconds)
    if compiling is not None and compiled:  # each warm-up batch taken to compile one shape: a lower bound
        compiling["seconds"] = max(0.0, sum(warm) - per_step * len(warm)) / len(warm)
    return per_step


def timed_stage(model: torch.nn.Module, stage: Any, run: ResolvedRun, device: torch.device,
                amp_dtype: torch.dtype | None, steps: int) -> tuple[float, float]:  # fmt: skip
    """`time_stage`'s seconds a step and what compiling one batch shape cost (0: not compiled)."""
    compiling: dict[str, float] = {}
    seconds = time_stage(model, stage, run, device, amp_dtype, steps, True, compiling)
    return seconds, compiling.get("seconds", 0.0)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Calibrator:
    """Times stages and encoding on one device, once per shape (see `shape_key`); each run under the
    precision it would train in there (`precision: auto` resolved for the device, harness.device)."""

    def __init__(self, device: torch.device, steps: int = 2, cache: CalibrationCache | None = None) -> None:
        self.device, self.steps, self.cache = device, steps, cache
        self.tables: dict[str, dict[Any, Any]] = {
            "step_seconds": {},  # a stage's (seconds per step, compile seconds)
            "per_token": {},  # an evaluation set's encoding seconds per token
            "fits": {},  # transfer tasks' classifier fits (seconds)
            "token_counts": {},  # an evaluation set's tokens (counted, not timed: never cached)
        }

    def once(self, table: str, key: Any, measure: Callable[[], Any]) -> Any:
        """`measure()` once per key in this plan; a timing also once per machine where there is a cache
        (harness.planning.calibration_cache)."""
        memory = self.tables[table]
        if key not in memory:
            kept = self.cache is not None and table != "token_counts"
            stored = self.cache.get(table, key) if kept else None  # type: ignore[union-attr]
            memory[key] = stored if stored is not None else measure()
            if kept and stored is None:
                self.cache.put(table, key, memory[key])  # type: ignore[union-attr]
        return memory[key]

    def tokens(self, encoder: Any, texts: list[str]) -> int:
        """`tokens`, once per tokenizer, max length and text list (trials share their evaluation sets)."""
        key = (encoder.source, encoder.eval_length, len(texts), hash(tuple(texts)))
        return self.once("token_counts", key, lambda: tokens(encoder, texts))


def stand_in_data(run: ResolvedRun, data_dir: Path) -> tuple[ResolvedRun, float, str | None]:
    """Full SNLI from the hub is counted at its published size and timed on the local pairs: (the run to
    load, the factor from the local SNLI to the real one for the stages that read it, a note)."""
    reads = run.method.reads_nli or any(stage.reads_nli() for stage in run.stages)
    if run.nli.train_data != "snli_hub" or not reads:
        return run, 1.0, None
    local = replace(run, nli=run.nli.model_copy(update={"train_data": "snli_local", "train_limit": None}))
    pairs = sum(len(group.hypotheses) for group in local.sources(data_dir).nli_groups())
    real = min(SNLI_TRAIN_PAIRS, run.nli.train_limit or SNLI_TRAIN_PAIRS)  # a limit counts groups: a bound
    note = f"full SNLI from the hub: counted at {real:,} labelled pairs, timed on the local SNLI pairs"
    return local, real / pairs, note


@dataclass
class Built:
    """A trial as the plan builds it: its run on the local model and data, the model, its loop stages."""

    run: ResolvedRun  # the trial's run, on the local (or stand-in) model and data
    encoder: Any
    model: MethodModel
    stages: list[Any]
    amp_dtype: torch.dtype | None
    shapes: tuple  # what sets every calibration's shapes: model, pooling, length, precision, method


def trial_cost(run: ResolvedRun, data_dir: Path, calibrator: Calibrator) -> TrialCost:
    """The trial's stages, evaluations and estimated seconds (see the module docstring)."""
    cost = TrialCost()
    if not run.method.trains:
        cost.notes.append("trains nothing")
        return cost
    loaded, factor, note = stand_in_data(run, data_dir)
    built, model_note = build(loaded, data_dir, calibrator.device)
    cost.notes += [n for n in (note, model_note) if n]
    cost.stages = stage_costs(run, built, factor, calibrator)
    evaluation_costs(cost, built, data_dir, calibrator)
    transfer = list(built.run.plan.scoring.transfer_tasks)
    if transfer and built.encoder is not None:
        s = built.run.settings
        key = (tuple(transfer), built.encoder.hidden_size, s.transfer_classifier, s.transfer_preset)
        cost.fit_seconds = calibrator.once("fits", key, lambda: fit_seconds(
            transfer, built.encoder.hidden_size, s.transfer_classifier, s.transfer_preset, calibrator.device,
            data_dir, s.text_variant))  # fmt: skip
    return cost


def build(run: ResolvedRun, data_dir: Path, device: torch.device) -> tuple[Built, str | None]:
    """The trial's model (a stand-in where its weights are not here) and loop stages over its data."""
    from harness.encoders.compiled import compile_choice
    from harness.encoders.encoder import Encoder
    from harness.encoders.standin import local_model
    from harness.methods.base import DataSources

    model_dir, note = local_model(run.settings.model, data_dir)
    local = replace(run, settings=run.settings.model_copy(update={"model": model_dir}))
    data = local.method.load_train_data(local, DataSources(data_dir))
    s = local.settings
    torch.manual_seed(s.seed)
    encoder = (
        Encoder(model_dir, s.pooling, s.max_seq_length, s.eval_max_seq_length)
        if local.method.needs_encoder
        else None
    )
    model = local.build(encoder).to(device).train()
    if encoder is not None:  # the trial's compile choice on this device (harness.encoders.compiled)
        compile_choice(encoder, s.compile, device)
    amp_dtype = DTYPES[resolve_precision(device, s.precision)]
    shapes = (s.model, s.pooling, s.max_seq_length, str(amp_dtype), local.method.name, str(s.compile))
    return Built(local, encoder, model, model.stages(s, data), amp_dtype, shapes), note


def stage_costs(run: ResolvedRun, built: Built, factor: float, calibrator: Calibrator) -> list[StageCost]:
    """Each loop stage's steps and evaluations (as the loop counts them) and its timed seconds per step;
    stages reading full SNLI count its real size (`factor` times the local one's batches)."""
    s, costs = built.run.settings, []
    params = shape_key(run.params.model_dump(mode="json"))
    for index, stage in enumerate(built.stages):
        spec = run.stages[index] if run.stages else None
        scale = factor if (spec.reads_nli() if spec else run.method.reads_nli) else 1.0
        per_epoch = math.ceil(len(stage.make_batches(random.Random(s.seed + stage.first_epoch))) * scale)
        total = per_epoch * stage.epochs
        total = min(total, stage.max_steps) if stage.max_steps else total
        shape = shape_key(spec.model_dump(mode="json")) if spec else (stage.name, index)
        key = (built.shapes, params, shape, s.batch_size)
        seconds, compiling = calibrator.once("step_seconds", key, partial(timed_stage,
            built.model, stage, built.run, calibrator.device, built.amp_dtype, calibrator.steps))  # fmt: skip
        evals = evaluations(total, per_epoch, s.eval_every, stage.scored, index == len(built.stages) - 1)
        shapes = len(built.encoder.buckets) if built.encoder is not None and built.encoder.buckets else 0
        costs.append(StageCost(stage.name, total, evals, seconds, compiling * shapes))
    return costs


def evaluation_costs(cost: TrialCost, built: Built, data_dir: Path, calibrator: Calibrator) -> None:
    """The texts of a dev and of the final evaluation, and their encoding's seconds. A final evaluation
    that is a dev pass scores the kept checkpoint, whose dev embeddings the trial's cache holds (it was
    dev-evaluated: the best, or the last stage's end): nothing is encoded again."""
    from harness.evaluate.suite import SentenceEncoder

    run, scorer = built.run, built.run.scorer
    dev, final = scorer.dev_texts(run, data_dir), scorer.final_texts(run, data_dir)
    cost.dev_texts, cost.final_texts = len(dev), len(final or [])
    embedder = built.model.eval_encoder()
    if embedder is None or built.encoder is None:
        return
    encode = SentenceEncoder(embedder, run.settings.eval_batch_size, built.amp_dtype)
    params = shape_key(run.params.model_dump(mode="json"))

    def seconds(texts: list[str], which: str) -> float:
        """Tokens x seconds per token on a sample of these texts (a set's lengths shape its batches)."""
        sample = random.Random(0).sample(texts, min(ENCODE_SAMPLE, len(texts)))
        key = (built.shapes[:4], run.settings.eval_batch_size, params, which, len(texts))
        per_token = calibrator.once("per_token", key, lambda: _token_seconds(
            encode, built.encoder, built.model, sample, calibrator))  # fmt: skip
        return calibrator.tokens(built.encoder, texts) * per_token

    cost.dev_seconds = seconds(dev, "dev")
    cost.final_seconds = seconds(final, "final") if final else 0.0


def tokens(encoder: Any, texts: list[str]) -> int:
    """The tokens of `texts` as an evaluation reads them (truncated at the encoder's evaluation length)."""
    if not texts:
        return 0
    ids = encoder.tokenizer(texts, truncation=True, max_length=encoder.eval_length)["input_ids"]
    return sum(len(row) for row in ids)


def _token_seconds(encode: Any, encoder: Any, model: torch.nn.Module, sample: list[str],
                   calibrator: Calibrator) -> float:  # fmt: skip
    """Seconds per token of an evaluation's encoding, in eval mode: the second pass over the sample (the
    first tokenizes it; a trial's token ids are cached after its first evaluation,
    harness.encoders.tokens)."""
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
