"""A trial's work, as its plan says (harness.resolve.run_plan): build the method's model, train it, evaluate
it, log the results. Nothing here handles a fault: what ends a trial early, and how its run ends then, is
harness.fleet.trial_ending's, around this."""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from harness.data.lineage import lineage, reading
from harness.device import DTYPES, pick_device, resolve_precision
from harness.encoders.compiled import compile_choice
from harness.encoders.encoder import Encoder
from harness.encoders.save import save_encoder
from harness.evaluate.encode import EmbeddingCache, TrialCache
from harness.evaluate.suite import SentenceEncoder
from harness.methods.base import DataSources
from harness.resolve.run_spec import ResolvedRun
from harness.study.stage_cache_use import cached_stages, record_cache_use
from harness.tracking.metric_names import OBJECTIVE
from harness.tracking.tracker import LoggedRun
from harness.train.loop import TrainOutcome, reseed, train

if TYPE_CHECKING:
    from harness.scoring.registry import Scorer
    from harness.study.trial import TrialContext


@dataclass
class Built:
    """A trial's model, data and scoring, before training; and the data files each phase read
    (harness.data.lineage)."""

    run_spec: ResolvedRun
    run: LoggedRun
    device: torch.device
    amp_dtype: torch.dtype | None
    encoder: Encoder | None
    model: Any
    data: Any
    embedder: Any  # what the scorer encodes with (the encoder, or a projection on it); None: no encoder
    final_encode: SentenceEncoder | None
    scorer: Scorer
    trained_on: set[Path] = field(default_factory=set)
    evaluated_on: set[Path] = field(default_factory=set)


def train_evaluate_log(
    run_spec: ResolvedRun,
    ctx: TrialContext,
    run: LoggedRun,
    report: Callable[[int, float], None],
    number: int,
) -> dict[str, float]:
    """Train and evaluate one configuration, logging everything on `run`; its final metrics."""
    built = build(run_spec, ctx, run)
    outcome = train_logged(built, ctx, report)
    metrics, results = evaluate(built, ctx, number)
    return log_results(built, ctx, outcome, metrics, results)


def build(run_spec: ResolvedRun, ctx: TrialContext, run: LoggedRun) -> Built:
    """The seeded model around its encoder, its training data and the scorer that scores it."""
    config = run_spec.settings
    reseed(config.seed)
    device = pick_device(config.device)
    amp_dtype = DTYPES[resolve_precision(device, config.precision)]
    encoder = None
    if run_spec.method.needs_encoder:
        encoder = Encoder(config.model, config.pooling, config.max_seq_length, config.eval_max_seq_length)
        run.set_tag("embedding", encoder.embedding)  # e.g. the model's sentence-transformers modules
        run.set_tag("compile", compile_choice(encoder, config.compile, device))
    with reading() as files:
        model = run_spec.build(encoder)
        data = run_spec.method.load_train_data(run_spec, DataSources(ctx.data_dir, ctx.tracker.uri))
    dev_encode = final_encode = None
    embedder = model.eval_encoder()
    if embedder is not None:
        dev_encode = SentenceEncoder(embedder, config.eval_batch_size, amp_dtype)
        # one cache for both: unchanged weights (frozen encoders, repeated evaluations) are encoded once
        embeddings = dev_encode.cache = TrialCache(EmbeddingCache(), shareable_key=dev_encode.key())
        final_encode = SentenceEncoder(embedder, config.eval_batch_size, amp_dtype, embeddings, ctx.progress)
    scorer = run_spec.scorer(model, run_spec, data, ctx.data_dir, dev_encode, final_encode)
    return Built(run_spec, run, device, amp_dtype, encoder, model, data, embedder, final_encode, scorer,
                 trained_on=set(files))  # fmt: skip


def train_logged(built: Built, ctx: TrialContext, report: Callable[[int, float], None]) -> TrainOutcome:
    """Train the model, logging its curves, its dev scores and the objective (the dev score of the model
    the trial would test now: the best so far with keep_best, else the latest; its curve in the UI) at each
    evaluation, and reporting each dev score to the study (its pruner)."""
    config, run, scorer = built.run_spec.settings, built.run, built.scorer
    latest: dict[str, float] = {}

    def dev_score() -> float:
        latest.clear()
        with reading() as files:
            latest.update({f"dev.{name}": value for name, value in scorer.dev_scores().items()})
        built.evaluated_on.update(files)
        latest.update({f"train_set.{name}": value for name, value in scorer.train_scores().items()})
        return latest[scorer.target_metric]

    stages_cache = (
        cached_stages(
            built.run_spec, built.model, ctx.data_dir, built.device, built.amp_dtype, run, ctx.tracker
        )
        if config.stage_cache
        else None
    )
    best = [-math.inf]

    def on_dev(step: int, score: float) -> None:
        if stages_cache is not None and stages_cache.reused is not None:  # loaded stages: their best too
            best[0] = max(best[0], stages_cache.reused[1].best)
        best[0] = max(best[0], score) if math.isfinite(score) else best[0]
        # the objective with the first dev scores: a trial's first stored metric
        # (harness.tracking.metric_names); without keep_best the model tested is the latest, and so is it
        run.log_metrics({OBJECTIVE: best[0] if config.keep_best else score, **latest}, step=step)
        report(step, score)

    def on_metrics(step: int, metrics: dict[str, float]) -> None:
        run.log_metrics(metrics, step=step, flush=False)

    with reading() as files:  # a dev evaluation inside keeps its files apart (dev_score)
        stages = built.model.stages(config, built.data)
        outcome = train(built.model, stages, config, built.device, built.amp_dtype, dev_score, on_metrics,
                        on_dev, ctx.progress, stages_cache)  # fmt: skip
    built.trained_on |= files
    if stages_cache is not None:
        record_cache_use(stages_cache, run, ctx.tracker)
    return outcome


def evaluate(built: Built, ctx: TrialContext, number: int) -> tuple[dict[str, float], dict[str, Any]]:
    """The scorer's final evaluation of the kept weights (MLflow metrics, JSON-able results), with the
    MTEB results where the run asks for them."""
    config, scorer = built.run_spec.settings, built.scorer
    if ctx.announce:
        ctx.announce(f"trial {number}: {scorer.final_note()}")
    with reading() as files:
        metrics, results = scorer.final()
        if config.mteb_results and built.final_encode is not None:  # an `sts` scorer's (its check_metric)
            _log_mteb_results(built.run, built.final_encode, scorer.scoring.final_tasks, ctx.data_dir,
                              f"harness/{ctx.study}-trial{number}")  # fmt: skip
    built.evaluated_on |= files
    return metrics, results


def log_results(
    built: Built, ctx: TrialContext, outcome: TrainOutcome, metrics: dict[str, float], results: dict[str, Any]
) -> dict[str, float]:
    """The final metrics, results.json, the data's lineage, the per-item record with its resamples, the
    scorer's arrays and (when asked or among the study's best) the weights; the final metrics."""
    run, scorer = built.run, built.scorer
    run.log_lineage({"training": lineage(built.trained_on, ctx.data_dir),
                     "evaluation": lineage(built.evaluated_on, ctx.data_dir)})  # fmt: skip
    final = {
        **metrics,
        f"{scorer.target_metric}.best": outcome.best_dev,
        OBJECTIVE: outcome.tested_dev,  # the Optuna value, the last point of its curve: the tested model's
        "train.best_step": outcome.best_step,
        "train.steps": outcome.steps,
        "train.seconds": outcome.seconds,
    }
    run.log_metrics(final, step=outcome.steps)
    run.log_text(json.dumps(results, indent=2), "results.json")
    record = scorer.items()
    if record is not None:  # every final score recomputable from its items (report intervals)
        run.log_items(record)
        _log_resamples(run, record)
    for name, array in scorer.arrays().items():  # e.g. SST dev embeddings (Phillips Fig. 3)
        run.log_array(array, name)
    if built.run_spec.settings.save_model or ctx.keep_model(outcome.tested_dev):
        _save_model(run, built.encoder, built.embedder)
    return final


def _log_mteb_results(
    run: LoggedRun, encode: SentenceEncoder, tasks: tuple[str, ...], data_dir: Path, model: str
) -> None:
    """The MTEB tasks among the final tasks, scored on MTEB's text with the final weights, as the artifact
    `mteb_results/` (MTEB's layout: `mteb_results/results/<model>/no_revision_available/<Task>.json`)."""
    from harness.evaluate.mteb_results import mteb_scores, mteb_tasks, write_mteb_results

    started = time.monotonic()
    scores = mteb_scores(encode, data_dir, mteb_tasks(list(tasks)))
    with tempfile.TemporaryDirectory() as scratch:
        write_mteb_results(Path(scratch), model, scores, seconds=round(time.monotonic() - started, 2))
        run.log_folder(Path(scratch), "mteb_results")


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _log_resamples(run: LoggedRun, record: object) -> None:
    """The record's item resamples under the report's default bootstrap, saved so that the report reads
    them (~1.5 s of a trial for STS12-16, STS-B and SICK-R; the report would spend it for each run);
    a failure costs the report that time, not the trial its scores."""
    from harness.stats.resample import Resampler, item_resamples

    resampler = Resampler()
    try:
        run.log_resamples(item_resamples(record, resampler), resampler)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the scores stand; the report recomputes from the record
        run.set_tag("resamples_saved", f"no: {_first_line(exc)}")


def _save_model(run: LoggedRun, encoder: Encoder | None, evaluated: object) -> None:
    """The evaluated weights as the artifact `model/` (harness.encoders.save); a run whose evaluated model
    is not a plain encoder (no transformer; a projection evaluated on top) says so in a tag instead."""
    if encoder is None or evaluated is not encoder:
        run.set_tag("model_saved", "no: only a plain encoder is saved (no transformer, or mlp_at_test)")
        return
    try:
        with tempfile.TemporaryDirectory() as scratch:
            layouts = "sentence-transformers" if save_encoder(encoder, Path(scratch)) else "hugging face only"
            run.log_folder(Path(scratch), "model")
    except Exception as exc:  # the trial's scores stand; only the copy of its weights is missing
        run.set_tag("model_saved", f"no: {_first_line(exc)}")
        return
    run.set_tag("model_saved", f"model/ ({layouts})")
