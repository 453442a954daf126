"""The study runner: a coordinator that prepares the study and its parent run, and worker loops.

`--workers 1` runs the worker loop in this process; `--workers N` starts N `harness worker` processes
on the same study (each pinned to one GPU through CUDA_VISIBLE_DEVICES when GPUs exist).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import torch
from optuna.storages import JournalStorage
from tqdm.auto import tqdm
from transformers import AutoConfig

from harness.data.paths import resolve_data_dir
from harness.errors import HarnessError, TrialSkipped
from harness.methods.base import DataSources
from harness.model.encoder import resolve_model_name
from harness.study import (
    INTERRUPTED,
    PARENT_RUN,
    best_value,
    default_storage,
    done_count,
    failed_trials,
    open_storage,
    open_study,
    prepare_resume,
    remaining,
    suggest,
)
from harness.study_spec import ResolvedStudy
from harness.tracking import Tracker, git_commit, resolve_tracking_uri
from harness.trial import TrialContext, run_trial

EXPERIMENT = "mlflow_experiment_id"
optuna.logging.set_verbosity(optuna.logging.ERROR)  # the runner reports failures itself


def preflight(study: ResolvedStudy, data_dir: Path, tracking_uri: str) -> None:
    """Fail before anything is written when evaluation data, models or training sets cannot be loaded."""
    runs = study.grid_runs()
    for model in {run.settings.model for run in runs if run.method.needs_encoder}:
        try:
            AutoConfig.from_pretrained(resolve_model_name(model))
        except OSError as exc:
            raise HarnessError(
                f"cannot load model {model!r}: {str(exc).splitlines()[0]}; "
                "use a local directory or all-MiniLM-L6-v2 when offline"
            ) from None
    for run in {json.dumps(run.flat(), sort_keys=True, default=str): run for run in runs}.values():
        run.objective.preflight(run, data_dir)  # evaluation data (loaders cache what they read)
        run.method.load_train_data(run, DataSources(data_dir, tracking_uri))


def run_study(
    study: ResolvedStudy,
    storage_spec: str | None = None,
    tracking_uri: str | None = None,
    data_dir: str | None = None,
    workers: int = 1,
    fresh: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
) -> optuna.Study:
    """Run (or resume) a study to the end; Ctrl-C stops it cleanly and marks what ran as interrupted."""
    root = resolve_data_dir(data_dir)
    tracking_uri = resolve_tracking_uri(tracking_uri)
    preflight(study, root, tracking_uri)
    storage = open_storage(storage_spec)
    if fresh:
        with contextlib.suppress(KeyError):
            optuna.delete_study(study_name=study.optuna_name, storage=storage)
    opt = open_study(study, storage, create=True)
    local = isinstance(storage, JournalStorage)
    requeued = prepare_resume(opt, storage, local=local, retry_failed=retry_failed)
    tracker = Tracker(tracking_uri)
    experiment = tracker.experiment_id(study.name)
    tags = {
        "study": study.name,
        "profile": study.profile,
        "sampler": study.sampler,
        "git_commit": git_commit(),
        "data_dir": str(root),
    }
    parent = tracker.open_parent(
        experiment, opt.user_attrs.get(PARENT_RUN), f"{study.name} ({study.profile})", tags
    )
    if local:
        tracker.kill_orphans(experiment, parent)
    opt.set_user_attr(PARENT_RUN, parent)
    opt.set_user_attr(EXPERIMENT, experiment)
    tracker.client.log_text(parent, study.source, "study.yaml")
    if requeued and progress:
        tqdm.write(f"resuming {study.optuna_name}: {requeued} interrupted trial(s) queued again")
    status = "FINISHED"
    try:
        if workers <= 1:
            worker_loop(study, opt, tracker, root, progress)
        else:
            _run_worker_processes(study, opt, storage_spec, tracker.uri, root, workers, progress)
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    except BaseException:
        status = "FAILED"
        raise
    finally:
        _summarise(opt, tracker, parent)
        failed, _ = failed_trials(opt)
        if status == "FINISHED" and failed:  # an honest parent: partial, or FAILED when nothing completed
            tracker.client.set_tag(parent, "outcome", f"partial: {len(failed)} trial(s) failed")
            if not done_count(opt):
                status = "FAILED"
        tracker.finish(parent, status)
    return opt


def worker_loop(
    study: ResolvedStudy,
    opt: optuna.Study,
    tracker: Tracker,
    data_dir: Path,
    progress: bool,
    position: int = 0,
) -> None:
    """Take trials from the study until none is left."""
    ctx = TrialContext(
        tracker,
        opt.user_attrs[EXPERIMENT],
        opt.user_attrs[PARENT_RUN],
        study.name,
        study.profile,
        data_dir,
        progress,
    )

    def objective(trial: optuna.Trial) -> float:
        values = suggest(trial, study)
        run = study.resolve(values)
        label = " ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items())

        def report(step: int, value: float) -> None:
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned(f"pruned at step {step} (dev score {value:.4g})")

        try:
            return run_trial(run, ctx, trial.number, report, label)
        except optuna.TrialPruned as exc:
            tqdm.write(f"trial {trial.number} {exc}")
            raise
        except KeyboardInterrupt:
            trial.set_user_attr(INTERRUPTED, True)
            raise
        except TrialSkipped as exc:  # something optional is missing: a failed trial that says what to give
            trial.set_user_attr("skipped", str(exc)[:1000])
            tqdm.write(f"trial {trial.number} skipped: {exc}")
            raise
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            trial.set_user_attr("error", reason[:1000])
            tqdm.write(f"trial {trial.number} failed: {reason.splitlines()[0]}")
            raise

    bar = _study_bar(study, opt, progress, position)
    while remaining(opt, study) > 0:
        opt.optimize(objective, n_trials=1, catch=(Exception,), gc_after_trial=True)
        _update_bar(bar, opt)
    bar.close()


def run_worker(
    study: ResolvedStudy,
    storage_spec: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
    progress: bool = True,
    position: int = 0,
) -> None:
    """`harness worker`: join a study that `harness run-study` created (this or another machine)."""
    root = resolve_data_dir(data_dir)
    opt = open_study(study, open_storage(storage_spec), create=False, worker=position)
    if PARENT_RUN not in opt.user_attrs:
        raise HarnessError(
            f"study {study.optuna_name} has no parent run yet; start it with `harness run-study`"
        )
    worker_loop(study, opt, Tracker(tracking_uri), root, progress, position)


def visible_gpus() -> list[str]:
    """GPU ids to hand out to workers: CUDA_VISIBLE_DEVICES if set, else every device torch sees."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [g for g in env.split(",") if g.strip()]
    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


def _run_worker_processes(
    study: ResolvedStudy,
    opt: optuna.Study,
    storage_spec: str | None,
    tracking_uri: str,
    data_dir: Path,
    workers: int,
    progress: bool,
) -> None:
    gpus = visible_gpus()
    threads = max(1, (os.cpu_count() or 1) // workers)
    procs: list[subprocess.Popen[bytes]] = []
    study_file = study.path
    for index in range(workers):
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = gpus[index % len(gpus)]
        cmd = [
            sys.executable,
            "-m",
            "harness",
            "worker",
            study_file,
            "--profile",
            study.profile,
            "--storage",
            storage_spec or default_storage(),
            "--data-dir",
            str(data_dir),
            "--tracking-uri",
            tracking_uri,
            "--position",
            str(index + 1),
        ]
        if not progress:
            cmd.append("--no-progress")
        procs.append(subprocess.Popen(cmd, env=env))
    bar = _study_bar(study, opt, progress, 0)
    try:
        while any(p.poll() is None for p in procs):
            time.sleep(2.0)
            _update_bar(bar, opt)
    except KeyboardInterrupt:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
        raise
    finally:
        bar.close()
    failed = [p.returncode for p in procs if p.returncode not in (0, None)]
    if failed:
        raise HarnessError(
            f"{len(failed)} worker(s) exited with an error (codes {failed}); see their output above"
        )


def _study_bar(study: ResolvedStudy, opt: optuna.Study, progress: bool, position: int) -> tqdm:
    total = done_count(opt) + remaining(opt, study)
    bar = tqdm(
        total=total,
        initial=done_count(opt),
        desc=f"study {study.optuna_name}",
        unit="trial",
        disable=not progress,
        position=position,
    )
    _update_bar(bar, opt)
    return bar


def _update_bar(bar: tqdm, opt: optuna.Study) -> None:
    bar.n = done_count(opt)
    bar.set_postfix(best=f"{best_value(opt):.2f}")
    bar.refresh()


def _summarise(opt: optuna.Study, tracker: Tracker, parent: str) -> None:
    """Best value and trial counts on the parent run."""
    trials = opt.get_trials(deepcopy=False)
    counts = {"trials.complete": 0, "trials.failed": 0, "trials.pruned": 0}
    for t in trials:
        key = {"COMPLETE": "trials.complete", "FAIL": "trials.failed", "PRUNED": "trials.pruned"}.get(
            t.state.name
        )
        if key:
            counts[key] += 1
    best = best_value(opt)
    metrics = {**counts, **({"best.objective": best} if math.isfinite(best) else {})}
    tracker.log_metrics(parent, metrics)
    if math.isfinite(best):
        tracker.client.set_tag(parent, "best_params", str(opt.best_params))
        tracker.client.set_tag(parent, "best_trial", str(opt.best_trial.number))
