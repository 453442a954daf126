"""One trial: build the method, train it, evaluate it, and record everything in a nested MLflow run."""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import optuna
import torch
import yaml

from harness.data.lineage import lineage, reading
from harness.device import DTYPES, hardware_tags, pick_device, resolve_precision
from harness.errors import HarnessError, ServiceUnavailable, TrialSkipped
from harness.evaluate.encode import EmbeddingCache, TrialCache
from harness.evaluate.suite import SentenceEncoder
from harness.fleet.recovery import TAKEN_OVER, TrialTakenOver
from harness.fleet.signals import pause_at, stop_reason
from harness.methods.base import DataSources
from harness.model.compiled import compile_choice
from harness.model.encoder import Encoder
from harness.model.save import save_encoder
from harness.spec.run_plan import PLAN_ARTIFACT
from harness.spec.run_spec import ResolvedRun
from harness.study.stage_cache_use import cached_stages, record_cache_use
from harness.tracking.metric_names import OBJECTIVE
from harness.tracking.tracker import LoggedRun, Tracker, git_commit, package_versions, tracking_outage
from harness.train.loop import reseed, train


@dataclass
class TrialContext:
    """What every trial of one study shares."""

    tracker: Tracker
    experiment_id: str
    parent_run_id: str
    study: str
    profile: str
    data_dir: Path
    progress: bool = True
    threads: int = 0  # torch CPU threads of this worker (0: not set), recorded as a tag
    keep_model: Callable[[float], bool] = lambda value: False  # the study's save_top_k rule
    announce: Callable[[str], None] | None = None  # a line for the terminal (long steps: final evaluation)
    study_tags: dict[str, str] = field(default_factory=dict)  # on every trial (the profile's changes)
    objectives: tuple[str, ...] = ()  # a multi-objective study's metrics: the trial's values, in order


def paper_default_tags(run_spec: ResolvedRun) -> dict[str, str]:
    """`paper_defaults` (what the method's paper defaults changed in fields the study left unset) and
    `paper_defaults.source` (where they come from), on runs where they changed something."""
    if not run_spec.paper_defaults:
        return {}
    return {"paper_defaults": run_spec.paper_defaults_note(),
            "paper_defaults.source": run_spec.method.run_defaults_source or run_spec.method.name}  # fmt: skip


def run_trial(
    run_spec: ResolvedRun,
    ctx: TrialContext,
    number: int,
    report: Callable[[int, float], None] = lambda step, value: None,
    label: str = "",
    on_start: Callable[[str], None] = lambda run_id: None,
    still_ours: Callable[[], bool] = lambda: True,
) -> float | tuple[float, ...]:
    """Train and evaluate one configuration; return its best dev score (the Optuna objective: the dev
    score of the method's objective, e.g. STS-B dev Spearman or the CS224N dev overall), or in a
    multi-objective study the values of its objectives' metrics (`ctx.objectives`), as logged.

    The child run ends FINISHED, FAILED (with the error as a tag) or KILLED (Ctrl-C or SIGTERM; skipped,
    the TrialSkipped notice as its `error` tag; pruned, the step and score; the Optuna database gone;
    its trial taken for lost while this worker was frozen), never RUNNING. An MLflow server that stays
    away past MLflow's retries leaves the run as it is (nothing can reach it): ServiceUnavailable.
    """
    config = run_spec.settings
    tags = {
        "method": config.method,
        "study": ctx.study,
        "trial": str(number),
        "profile": ctx.profile,
        "git_commit": git_commit(),
        "mlflow.source.git.commit": git_commit(),
        "versions": package_versions(),
        "data_dir": str(ctx.data_dir),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "threads": str(ctx.threads or torch.get_num_threads()),
        **hardware_tags(pick_device(config.device), config.precision),
        **({"variant": run_spec.variant} if run_spec.variant else {}),
        **paper_default_tags(run_spec),
        **ctx.study_tags,
    }
    try:
        run = ctx.tracker.start_child(
            ctx.experiment_id,
            ctx.parent_run_id,
            f"{label} (trial {number})" if label else f"trial {number}",
            tags,
        )
    except Exception as exc:
        outage = tracking_outage(exc)
        if outage is not None:
            raise outage from None
        raise
    try:
        pause_at("trial_run_created")
        on_start(run.run_id)
        pause_at("trial_started")
        run.log_params(run_spec.flat())
        run.log_text(yaml.safe_dump(run_spec.flat(), sort_keys=False), "config.yaml")
        run.log_text(run_spec.plan.to_json(), PLAN_ARTIFACT)
        value = _train_and_evaluate(run_spec, ctx, run, report, number)
        pause_at("trial_scored")
    except KeyboardInterrupt as exc:
        run.finish("KILLED", f"{stop_reason(exc)}; re-run the study to run this trial again")
        raise
    except ServiceUnavailable as exc:  # the Optuna database is gone: the trial goes back to the queue
        with contextlib.suppress(Exception):  # and MLflow may have gone with it (one PostgreSQL)
            run.finish("KILLED", f"stopped: {exc}")
        raise
    except TrialTakenOver as exc:  # a frozen worker woke: the lost-trial handler's KILLED and reason stand
        run.finish_unless_ended("KILLED", str(exc))
        raise
    except TrialSkipped as exc:
        run.finish("KILLED", f"skipped: {exc}")
        raise
    except optuna.TrialPruned as exc:  # the study's pruner stopped it (its dev scores so far are logged)
        run.finish("KILLED", str(exc))
        raise
    except BaseException as exc:
        outage = tracking_outage(exc)
        if outage is not None:  # nothing can be written to MLflow; the trial goes back to the queue
            raise outage from None
        run.log_text(traceback.format_exc(), "error.txt")
        run.finish("FAILED", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        raise
    if not still_ours():  # taken for lost (a heartbeat gap) and re-run elsewhere: not a second result
        run.finish_unless_ended("KILLED", TAKEN_OVER)
        # raised, not returned: Optuna 5.0 refuses to tell a failed trial a value and, with no error of the
        # objective to log, ends `_run_trial` in `assert False` (optuna/study/_optimize.py); a raised error
        # makes it log the trial as failed and raise the refusal, which the worker loop takes for lost
        raise TrialTakenOver(TAKEN_OVER)
    run.finish("FINISHED")
    pause_at("trial_finished")
    return value


def _train_and_evaluate(
    run_spec: ResolvedRun,
    ctx: TrialContext,
    run: LoggedRun,
    report: Callable[[int, float], None],
    number: int = 0,
) -> float | tuple[float, ...]:
    config = run_spec.settings
    reseed(config.seed)
    device = pick_device(config.device)
    amp_dtype = DTYPES[resolve_precision(device, config.precision)]
    encoder = (
        Encoder(config.model, config.pooling, config.max_seq_length, config.eval_max_seq_length)
        if run_spec.method.needs_encoder
        else None
    )
    if encoder is not None:
        run.set_tag("embedding", encoder.embedding)  # e.g. the model's sentence-transformers modules
        run.set_tag("compile", compile_choice(encoder, config.compile, device))
    trained_on: set[Path] = set()  # the data files read (harness.data.lineage), by what they served
    evaluated_on: set[Path] = set()
    with reading() as files:
        model = run_spec.build(encoder)
        data = run_spec.method.load_train_data(run_spec, DataSources(ctx.data_dir, ctx.tracker.uri))
    trained_on |= files

    dev_encode = final_encode = None
    embedder = model.eval_encoder()
    if embedder is not None:
        dev_encode = SentenceEncoder(embedder, config.eval_batch_size, amp_dtype)
        # one cache for both: unchanged weights (frozen encoders, repeated evaluations) are encoded once
        dev_encode.cache = cache = TrialCache(EmbeddingCache(), shareable_key=dev_encode.key())
        final_encode = SentenceEncoder(
            embedder, config.eval_batch_size, amp_dtype, cache, progress=ctx.progress
        )
    objective = run_spec.objective(model, run_spec, data, ctx.data_dir, dev_encode, final_encode)

    latest: dict[str, float] = {}

    def dev_score() -> float:
        latest.clear()
        with reading() as files:
            latest.update({f"dev.{name}": value for name, value in objective.dev_scores().items()})
        evaluated_on.update(files)
        latest.update({f"train_set.{name}": value for name, value in objective.train_scores().items()})
        return latest[objective.dev_metric]

    best = [-math.inf]  # the best dev score so far: the objective at this step (its curve in the UI)

    def on_dev(step: int, score: float) -> None:
        if cache is not None and cache.reused is not None:  # stages loaded from the cache: their best too
            best[0] = max(best[0], cache.reused[1].best)
        best[0] = max(best[0], score) if math.isfinite(score) else best[0]
        # the objective with the first dev scores: a trial's first stored metric
        # (harness.tracking.metric_names)
        run.log_metrics({OBJECTIVE: best[0], **latest}, step=step)
        report(step, score)

    cache = (
        cached_stages(run_spec, model, ctx.data_dir, device, amp_dtype, run, ctx.tracker)
        if config.stage_cache
        else None
    )
    with reading() as files:  # a dev evaluation inside keeps its files apart (dev_score)
        outcome = train(
            model,
            model.stages(config, data),
            config,
            device,
            amp_dtype,
            dev_score,
            on_metrics=lambda step, m: run.log_metrics(m, step=step, flush=False),
            on_dev=on_dev,
            progress=ctx.progress,
            cache=cache,
        )
    trained_on |= files
    if cache is not None:
        record_cache_use(cache, run, ctx.tracker)
    if ctx.announce:
        ctx.announce(f"trial {number}: {objective.final_note()}")
    with reading() as files:
        metrics, results = objective.final()
        if config.mteb_results and final_encode is not None:  # an `sts` objective's (its check_metric)
            _log_mteb_results(run, final_encode, run_spec.plan.scoring.final_tasks, ctx.data_dir,
                              f"harness/{ctx.study}-trial{number}")  # fmt: skip
    evaluated_on |= files
    run.log_lineage(
        {"training": lineage(trained_on, ctx.data_dir), "evaluation": lineage(evaluated_on, ctx.data_dir)}
    )
    final = {
        **metrics,
        f"{objective.dev_metric}.best": outcome.best_dev,
        OBJECTIVE: outcome.best_dev,  # the trial's Optuna value: the last point of its curve
        "train.best_step": outcome.best_step,
        "train.steps": outcome.steps,
        "train.seconds": outcome.seconds,
    }
    run.log_metrics(final, step=outcome.steps)
    run.log_text(json.dumps(results, indent=2), "results.json")
    record = objective.items()
    if record is not None:  # every final score recomputable from its items (report intervals)
        run.log_items(record)
        _log_resamples(run, record)
    for name, array in objective.arrays().items():  # e.g. SST dev embeddings (Phillips Fig. 3)
        run.log_array(array, name)
    if config.save_model or ctx.keep_model(outcome.best_dev):
        _save_model(run, encoder, embedder)
    if ctx.objectives:
        return objective_values(final, ctx.objectives)
    return outcome.best_dev


def objective_values(final: dict[str, float], names: tuple[str, ...]) -> tuple[float, ...]:
    """A multi-objective trial's values: its logged metrics `names`; one it did not log is an error that
    says what it did log."""
    missing = [name for name in names if name not in final]
    if missing:
        logged = ", ".join(sorted(final))
        raise HarnessError(
            f"objective {missing[0]!r} is not among this trial's final metrics ({logged}); name one of them "
            "in 'objectives', or add its task to final_tasks"
        )
    return tuple(float(final[name]) for name in names)


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


def _log_resamples(run: LoggedRun, record: object) -> None:
    """The record's item resamples under the report's default bootstrap, saved so that the report reads
    them (~1.5 s of a trial for STS12-16, STS-B and SICK-R; the report would spend it for each run);
    a failure costs the report that time, not the trial its scores."""
    from harness.stats.resample import Resampler, item_resamples

    resampler = Resampler()
    try:
        run.log_resamples(item_resamples(record, resampler), resampler)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the scores stand; the report recomputes from the record
        run.set_tag(
            "resamples_saved", f"no: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )


def _save_model(run: LoggedRun, encoder: Encoder | None, evaluated: object) -> None:
    """The evaluated weights as the artifact `model/` (harness.model.save); a run whose evaluated model
    is not a plain encoder (no transformer; a projection evaluated on top) says so in a tag instead."""
    if encoder is None or evaluated is not encoder:
        run.set_tag("model_saved", "no: only a plain encoder is saved (no transformer, or mlp_at_test)")
        return
    try:
        with tempfile.TemporaryDirectory() as scratch:
            layouts = "sentence-transformers" if save_encoder(encoder, Path(scratch)) else "hugging face only"
            run.log_folder(Path(scratch), "model")
    except Exception as exc:  # the trial's scores stand; only the copy of its weights is missing
        run.set_tag(
            "model_saved", f"no: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        )
        return
    run.set_tag("model_saved", f"model/ ({layouts})")
