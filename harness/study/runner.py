"""The study runner: a coordinator that prepares the study and its parent run, and worker loops.

`--workers 1` runs the worker loop in this process; `--workers N` starts N `harness worker` processes
on the same study (each pinned to one GPU through CUDA_VISIBLE_DEVICES when GPUs exist).

Threads: every trial process runs torch on a fixed number of CPU threads, `--threads` (default
HARNESS_THREADS, else the machine's cores divided by the workers), recorded as each trial's `threads` tag.
CPU reductions split their work by thread, so bit-identical scores need the same seed and thread count:
fix --threads when comparing runs made with different --workers.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import optuna
import torch
from optuna.storages import JournalStorage
from optuna.trial import TrialState
from tqdm.auto import tqdm

from harness.bar_line import say, use_line
from harness.credentials import CredentialsRefused
from harness.data.paths import resolve_data_dir
from harness.errors import HarnessError, ServiceUnavailable
from harness.fleet.lease import CoordinatorLease
from harness.fleet.optuna_access import state_now, storage_of, trial_id
from harness.fleet.recovery import (
    DEFAULT_HEARTBEAT,
    EXPERIMENT,
    MLFLOW_RUN,
    TAKEN_OVER,
    WORKER,
    TrialTakenOver,
    close_stray_runs,
    others_pending,
    requeue_interrupted,
    wait_for_others,
    watch,
)
from harness.fleet.signals import stop_reason
from harness.fleet.steady_storage import close as close_storage
from harness.fleet.trial_ending import marked_if_stopped, optimize_one, told_to_the_study
from harness.places import check_reachable, resolve_tracking_uri
from harness.program import as_invoked
from harness.resolve.derived import identify
from harness.resolve.paper_plans import PAPER_PLANS_ARTIFACT, paper_plans
from harness.resolve.study_spec import ResolvedStudy
from harness.study.data_changes import changed_data_line
from harness.study.fresh_start import retire_runs, retired_line
from harness.study.growth import grow, grows
from harness.study.optuna_study import (
    PARENT_RUN,
    SURPLUS,
    best_configuration,
    done_count,
    failed_trials,
    open_storage,
    open_study,
    pareto_front,
    prepare_resume,
    remaining,
    suggest,
    unfinished,
)
from harness.study.preflight import Checked, check_before_start
from harness.study.progress_bar import study_bar, update_bar
from harness.study.trial import TrialContext, run_trial
from harness.study.workers import WorkerSettings, run_local_workers, watch_external_workers
from harness.tracking.store_index import trials_tag
from harness.tracking.tracker import (
    CONFIG_TAG,
    NOTE_TAG,
    OBJECTIVES_TAG,
    PARENT_GROUP,
    Tracker,
    configuration,
    git_commit,
    objectives_tag,
)

HEARTBEAT = "heartbeat_seconds"  # the coordinator's; workers adopt it
JOIN_NOTICE = 30.0  # seconds a worker waits to join a study before it says what it waits for


class GridPointTaken(Exception):
    """A surplus grid trial (harness.study.optuna_study.ResumableGridSampler): it ends at once, uncounted."""


optuna.logging.set_verbosity(optuna.logging.ERROR)  # the runner reports failures itself


def default_threads(workers: int = 1) -> int:
    """HARNESS_THREADS, else this machine's usable cores divided among the workers."""
    if os.environ.get("HARNESS_THREADS"):
        return max(1, int(os.environ["HARNESS_THREADS"]))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // workers)


def run_study(
    study: ResolvedStudy,
    storage_spec: str | None = None,
    tracking_uri: str | None = None,
    data_dir: str | None = None,
    workers: int = 1,
    fresh: bool = False,
    retry_failed: bool = False,
    progress: bool = True,
    heartbeat: int = DEFAULT_HEARTBEAT,
    threads: int | None = None,
    checked: Checked | None = None,
    per_gpu: int = 1,
    gpu_sharing: str = "auto",
) -> optuna.Study:
    """Run (or resume) a study to the end; Ctrl-C stops it cleanly and marks what ran as interrupted.
    With `workers` >= 2, `per_gpu` of them share each GPU (harness.fleet.placement), as `gpu_sharing`
    says (harness.fleet.mps).

    Before anything is written: the inputs are loaded and the tracking store and the Optuna storage
    reached (harness.study.preflight; `checked` when the caller did that already), and this process takes the
    study's coordinator lease (harness.fleet.lease).
    """
    threads = threads or default_threads(max(1, workers))
    checked = checked or check_before_start(study, storage_spec, tracking_uri, data_dir, workers, heartbeat)
    storage = checked.storage
    if fresh:
        parent = _delete_study(study, storage)
        retired = retire_runs(Tracker(checked.tracking_uri), study, parent)
        if any(retired):
            say(retired_line(study.name, study.profile, retired))
    elif study.sampler == "grid" and grows(study, storage):
        kept, new = grow(study, storage)
        say(f"study {study.name} grown: {kept} ended trial(s) kept on the grown grid, {new} new point(s)")
    opt = open_study(study, storage, create=True)
    settings = WorkerSettings(
        storage_spec,
        checked.tracking_uri,
        checked.data_dir,
        heartbeat,
        threads,
        progress,
        per_gpu,
        gpu_sharing,
    )
    with CoordinatorLease(opt, f"run-study {study.name} --profile {study.profile}"):
        return _coordinate(study, opt, storage, settings, workers, retry_failed)


def _delete_study(study: ResolvedStudy, storage: optuna.storages.BaseStorage) -> str | None:
    """--fresh: delete the study, unless another coordinator is running it; return its parent run's id."""
    try:
        existing = optuna.load_study(study_name=study.optuna_name, storage=storage)
    except KeyError:
        return None
    CoordinatorLease(existing, "run-study --fresh").acquire().stop_renewing()  # refused if held
    parent = existing.user_attrs.get(PARENT_RUN)
    optuna.delete_study(study_name=study.optuna_name, storage=storage)
    return parent


def _coordinate(
    study: ResolvedStudy,
    opt: optuna.Study,
    storage: optuna.storages.BaseStorage,
    settings: WorkerSettings,
    workers: int,
    retry_failed: bool,
) -> optuna.Study:
    """The coordinator's part, holding the lease: resume, the parent run, the workers, the outcome."""
    root, progress, threads = settings.data_dir, settings.progress, settings.threads
    tracker = Tracker(settings.tracking_uri)
    local = isinstance(storage, JournalStorage)
    watch(storage, tracker)
    requeued = prepare_resume(opt, storage, local=local, retry_failed=retry_failed)
    main = study.grid_runs()[0].plan.scoring.main_metric  # the final score the study is read by
    experiment = tracker.experiment_id(study.name, study.note(), searched=list(study.search), finals=[main])
    for key, value in study.identity_tags().items():  # `harness studies` and `report` find studies by them
        if key != "study.overrides":
            tracker.tag_experiment(experiment, key, value)
    tracker.tag_experiment(experiment, trials_tag(study.profile), str(study.n_trials))  # "1 of 2" in listings
    tags = {
        **study.identity_tags(),
        "study": study.name,
        CONFIG_TAG: PARENT_GROUP,  # its own group in the UI's view, the first row
        "profile": study.profile,
        "sampler": study.sampler,
        **({OBJECTIVES_TAG: objectives_tag(study.objectives)} if study.objectives else {}),
        "git_commit": git_commit(),
        "data_dir": str(root),
        "workers": str(workers),
        "threads": str(threads),
        **({NOTE_TAG: study.note()} if study.note() else {}),
    }
    parent = tracker.open_parent(
        experiment, opt.user_attrs.get(PARENT_RUN), f"{study.name} ({study.profile})", tags
    )
    status, outage = "FINISHED", None
    try:  # from here the parent run ends with the study, also when a signal comes during the set-up
        if local:
            tracker.kill_orphans(experiment, parent)
        opt.set_user_attr(EXPERIMENT, experiment)
        opt.set_user_attr(HEARTBEAT, settings.heartbeat)
        opt.set_user_attr(PARENT_RUN, parent)  # last: waiting workers join (and start trials) once it is set
        close_stray_runs(opt, tracker)
        tracker.run(parent).log_text(study.source, "study.yaml")
        tracker.run(parent).log_text(paper_plans(study).to_json(), PAPER_PLANS_ARTIFACT)
        changed = changed_data_line(tracker, experiment, parent, root)
        if changed:
            say(changed)
        if requeued and progress:
            tqdm.write(f"resuming {study.optuna_name}: {requeued} interrupted trial(s) queued again")
        if workers == 0:
            watch_external_workers(study, opt, tracker, progress)
        elif workers == 1:
            torch.set_num_threads(threads)
            worker_loop(study, opt, tracker, root, progress, threads=threads)
        else:
            run_local_workers(study, opt, tracker, settings, workers)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (harness.fleet.signals)
        status = "KILLED"
        tracker.run(parent).set_tag("outcome", f"{stop_reason(exc)}: re-run the same command to resume")
        raise
    except ServiceUnavailable as exc:  # the database or the tracking server is gone: close what we can
        status, outage = "KILLED", exc
        raise
    except BaseException:
        status = "FAILED"
        raise
    finally:
        if outage is None:
            _conclude(study, opt, tracker, parent, status)
        elif outage.service == "database":  # MLflow may have gone with it (one PostgreSQL): best effort
            with contextlib.suppress(Exception):
                tracker.run(parent).set_tag("outcome", f"stopped: {outage}")
                tracker.finish(parent, "KILLED")
    return opt


def _conclude(study: ResolvedStudy, opt: optuna.Study, tracker: Tracker, parent: str, status: str) -> None:
    """The parent run's counts and its end: FINISHED, partial (the `outcome` tag says what is missing),
    FAILED when nothing completed, or the status of an interruption."""
    close_stray_runs(opt, tracker)
    _summarise(opt, tracker, parent)
    failed, _ = failed_trials(opt)
    missing = unfinished(opt, study)
    if status == "FINISHED" and (failed or missing):  # an honest parent: partial, or FAILED
        parts = [f"{len(failed)} trial(s) failed"] if failed else []
        parts += [f"{missing} trial(s) not run"] if missing else []
        tracker.run(parent).set_tag("outcome", "partial: " + ", ".join(parts))
        if not done_count(opt):
            status = "FAILED"
    tracker.finish(parent, status)


def worker_loop(
    study: ResolvedStudy,
    opt: optuna.Study,
    tracker: Tracker,
    data_dir: Path,
    progress: bool,
    position: int = 0,
    threads: int | None = None,
) -> None:
    """Take trials from the study until none is left; then, on a heartbeat storage, stay while other
    workers' trials run, to re-run those whose worker dies (harness.fleet.recovery)."""
    freeze_what_is_loaded()
    heartbeats = watch(storage_of(opt), tracker)
    worker = f"{socket.gethostname()}:{os.getpid()}"
    objective = optuna_objective(study, opt, trial_context(study, opt, tracker, data_dir, progress, threads))
    use_line(position if progress else 0)  # a local worker's bars: its own line, under the study bar
    bar = study_bar(study, opt, progress and not position)
    while (left := remaining(opt, study)) > 0 or (heartbeats and others_pending(opt)):
        if left > 0:
            try:
                optimize_one(opt, objective, tracker, say)
            except KeyboardInterrupt as exc:  # on a database storage the trial is queued again at once
                if heartbeats:
                    requeue_interrupted(opt, tracker, worker, stop_reason(exc))
                raise
        else:
            wait_for_others(opt, tracker)
        update_bar(bar, opt)
    bar.close()


def trial_context(
    study: ResolvedStudy,
    opt: optuna.Study,
    tracker: Tracker,
    data_dir: Path,
    progress: bool,
    threads: int | None,
) -> TrialContext:
    """What every trial this worker runs shares."""
    return TrialContext(
        tracker,
        opt.user_attrs[EXPERIMENT],
        opt.user_attrs[PARENT_RUN],
        study.name,
        study.profile,
        data_dir,
        progress,
        threads or torch.get_num_threads(),
        lambda value: among_best(opt, value, study.save_top_k),
        announce=say,
        study_tags=study.profile_tags(),
        objectives=tuple(o.metric for o in study.objectives),
    )


def optuna_objective(
    study: ResolvedStudy, opt: optuna.Study, ctx: TrialContext
) -> Callable[[optuna.Trial], float | tuple[float, ...]]:
    """The function Optuna calls for each trial: the trial's run, resolved from its suggested values."""
    worker = f"{socket.gethostname()}:{os.getpid()}"

    def objective(trial: optuna.Trial) -> float | tuple[float, ...]:
        with marked_if_stopped(trial):  # stopped before the run too: queued again, not a failure
            trial.set_user_attr(WORKER, worker)
            if storage_of(opt).get_trial_system_attrs(trial_id(trial)).get(SURPLUS):  # its point was taken
                raise GridPointTaken(f"trial {trial.number}: grid point already taken; not run")
            values = suggest(trial, study)
            run = study.resolve(values)
        label = " ".join(f"{k}={v}" for k, v in values.items())  # in full: the run's name in the UI
        started = time.monotonic()
        with told_to_the_study(trial, say):
            value = run_trial(run, ctx, trial.number, pruning_report(study, trial), label,
                              on_start=lambda run_id: record_run(trial, run_id),
                              still_ours=lambda: state_now(opt, trial) == TrialState.RUNNING,
                              config=configuration(values))  # fmt: skip
        seconds = time.monotonic() - started
        say(f"trial {trial.number} ({label or 'the base'}): {scored(value, study)} in {seconds:.0f} s")
        return value

    return objective


def pruning_report(study: ResolvedStudy, trial: optuna.Trial) -> Callable[[int, float], None]:
    """Each dev score, reported to the study's pruner, which may stop the trial there."""

    def report(step: int, value: float) -> None:
        if study.multi_objective():  # Optuna reports and prunes on one value only
            return
        with taken_over_if_finished():
            trial.report(value, step)
        if trial.should_prune():
            raise optuna.TrialPruned(f"pruned at step {step} (dev score {value:.4g})")

    return report


@contextlib.contextmanager
def taken_over_if_finished() -> Iterator[None]:
    """A write to this worker's trial that Optuna refuses because the trial has ended: another process
    took it for lost (harness.fleet.recovery) while this one was frozen."""
    try:
        yield
    except optuna.exceptions.UpdateFinishedTrialError:
        raise TrialTakenOver(TAKEN_OVER) from None


def record_run(trial: optuna.Trial, run_id: str) -> None:
    """The trial's MLflow run id on the Optuna trial (lost-trial recovery ends that run KILLED)."""
    with taken_over_if_finished():
        trial.set_user_attr(MLFLOW_RUN, run_id)


def scored(value: float | tuple[float, ...], study: ResolvedStudy) -> str:
    """`dev score 80.24`, or a multi-objective trial's `objective 80.24, transfer.devavg 71.3`."""
    if isinstance(value, tuple):
        return ", ".join(f"{o.metric} {v:.4g}" for o, v in zip(study.objectives, value, strict=True))
    return f"dev score {value:.4g}"


def freeze_what_is_loaded() -> None:
    """Move every object alive now (the imported torch, transformers, MLflow: ~500k objects) out of the
    garbage collector's sight (`gc.freeze`) at the start of each worker loop: once in a CLI process, once
    a study in a process that runs many (the tests: freezing once a process left every later test's
    objects in sight, 145 ms a trial). The full collection after each trial (`gc_after_trial`, which
    frees a trial's model and the cycles it holds, on a GPU too) then scans only what trials created:
    227 ms a trial -> under 1 ms on a 2-core AMD EPYC (bench/gc_after_trial.py). The price: what was alive
    at a loop's start and becomes cyclic garbage later is never collected in that process. Thawing at
    each loop's end cost the tests 11 % more CPU (every later full collection scanned the thawed heap:
    139 -> 156 s user for the every-study, objectives, trial and study tests), so it is not done."""
    gc.collect()
    gc.freeze()


def among_best(opt: optuna.Study, value: float, k: int) -> bool:
    """Whether a trial scoring `value` is among the `k` best of the trials completed so far (so the
    study's final k best were each among the best when they ended, and saved)."""
    if k <= 0:
        return False
    done = opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    better = sum(t.value is not None and t.value > value for t in done)
    return better < k


def run_worker(
    study: ResolvedStudy,
    storage_spec: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
    progress: bool = True,
    position: int = 0,
    heartbeat: int = DEFAULT_HEARTBEAT,
    threads: int | None = None,
    wait: float = 0.0,
    pinned: bool = False,
) -> None:
    """`harness worker`: join a study that `harness run-study` created (this or another machine);
    `wait` seconds for the coordinator to create it (workers started beside it: compose, Slurm);
    `pinned`: `study` is the coordinator's own (a local worker), not to be identified again."""
    threads = threads or default_threads()
    root = resolve_data_dir(data_dir)
    tracking_uri = resolve_tracking_uri(tracking_uri)
    started = time.monotonic()
    delay, said = 1.0, False
    while True:  # the tracking server, the storage and the study may all still be starting
        try:
            check_reachable(tracking_uri)
            opt, study = _join(study, storage_spec, heartbeat, position, pinned)
            break
        except CredentialsRefused:
            raise  # waiting does not change them
        except HarnessError as exc:
            waited = time.monotonic() - started
            if waited > wait:
                raise
            if waited > JOIN_NOTICE and not said:  # once: a silent worker looks hung
                say(as_invoked(f"waiting to join (up to {wait:.0f} s): {exc}"))
                said = True
            time.sleep(delay * random.uniform(0.8, 1.2))  # spread: many workers start at one instant
            delay = min(2 * delay, 10.0)
    torch.set_num_threads(threads)
    worker_loop(study, opt, Tracker(tracking_uri), root, progress, position, threads)


def _join(
    study: ResolvedStudy, storage_spec: str | None, heartbeat: int, position: int, pinned: bool = False
) -> tuple[optuna.Study, ResolvedStudy]:
    """The study as a worker sees it (the derived study the coordinator runs, harness.resolve.derived), with
    the coordinator's heartbeat interval (a worker beating less often than the others check would have its
    live trials taken for lost), and a TPE seed of its own (its position, else its Slurm array or
    Kubernetes index, else its pid)."""
    slot = position or int(os.environ.get("SLURM_ARRAY_TASK_ID") or os.environ.get("JOB_COMPLETION_INDEX")
                           or os.getpid())  # fmt: skip
    storage = open_storage(storage_spec, heartbeat, create=False)
    try:  # a worker waiting for the study tries again every few seconds: no attempt keeps a connection
        study = study if pinned else identify(study, storage).study
        opt = open_study(study, storage, create=False, worker=slot)
        if PARENT_RUN not in opt.user_attrs:
            raise HarnessError(
                f"study {study.optuna_name} has no parent run yet; start it with `harness run-study`"
            )
    except BaseException:
        close_storage(storage)
        raise
    agreed = int(opt.user_attrs.get(HEARTBEAT, heartbeat))
    if agreed != heartbeat and "://" in (storage_spec or ""):
        close_storage(storage)
        opt = open_study(study, open_storage(storage_spec, agreed, create=False), create=False, worker=slot)
    return opt, study


def _summarise(opt: optuna.Study, tracker: Tracker, parent: str) -> None:
    """Best value and trial counts on the parent run."""
    failed, skipped = failed_trials(opt)
    counts = {
        "trials.complete": len(opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))),
        "trials.failed": len(failed),  # errors only: not lost (re-run) or interrupted trials
        "trials.skipped": len(skipped),
        "trials.pruned": len(opt.get_trials(deepcopy=False, states=(TrialState.PRUNED,))),
    }
    best = best_configuration(opt)  # on the seed mean where the study repeats seeds
    metrics = {**counts, **({"best.objective": best.mean} if best is not None else {})}
    if len(opt.directions) > 1:  # several objectives: the trials on the Pareto front
        front = pareto_front(opt)
        metrics["trials.pareto"] = len(front)
        tracker.run(parent).set_tag("pareto_trials", ", ".join(str(t.number) for t in front))
    tracker.log_metrics(parent, metrics)
    if best is not None:
        tracker.run(parent).set_tag("best_params", str(best.params))
        tracker.run(parent).set_tag("best_trial", ", ".join(str(t) for t in best.trials))
