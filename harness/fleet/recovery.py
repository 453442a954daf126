"""Lost workers on an RDB storage: heartbeats find their trials, which run again with the same parameters.

Each running trial records a heartbeat every `heartbeat` seconds (Optuna's RDBStorage heartbeat). A trial
whose heartbeat is older than the grace period (3 heartbeats) belongs to a worker that was killed or
preempted: any live worker fails it (`optuna.storages.fail_stale_trials`, which Optuna also calls before
each new trial), and `StaleTrialHandler` then

1. ends the trial's MLflow run KILLED, its `error` tag naming the lost worker and the re-run,
2. queues the same parameters again (Optuna's RetryHeartbeatStaleTrialCallback; the grid point keeps its
   `grid_id`; the last entry of the new trial's `retry_history` names the lost one, which is then not
   counted as an error (`failed_trial` names the first of the chain: a lost re-run's copy keeps it), and
   its `requeued_because` says why), at most `MAX_RETRIES` times, so that a trial which kills every
   worker it lands on stops.

A trial beats from its creation (harness.fleet.trial_beat), so a worker slow inside `ask` is not lost; one
killed before its first beat is found by `wait_for_others`. A trial that held no point yet (no parameters,
no grid point) is failed and not queued: its point was never taken. A stopped trial (Ctrl-C, SIGTERM) is
queued again by its own worker at once, or, if that worker was killed first, by a waiting one
(`stranded`). Whoever queues a lost trial, one copy is made (harness.fleet.once_writes).

A worker with nothing left to start waits while other workers' trials run, so that it can take over a
trial whose worker dies (otherwise the last grid point of a killed worker would be lost).
"""

from __future__ import annotations

import copy
import time
import warnings
from datetime import datetime
from typing import TYPE_CHECKING, Any

import optuna
from optuna.storages import RetryHeartbeatStaleTrialCallback
from optuna.trial import FrozenTrial, TrialState

from harness.fleet.once_writes import HISTORY
from harness.fleet.optuna_access import (
    backend_of,
    heartbeat_backend,
    running_unbeaten,
    storage_of,
    study_id,
    trial_id,
)
from harness.notices import notice

if TYPE_CHECKING:  # the runner passes one; this module needs no MLflow of its own
    from harness.tracking.tracker import Tracker


MLFLOW_RUN = "mlflow_run_id"
PARENT_RUN = "mlflow_parent_run_id"  # study user attrs: the parent run and its experiment
EXPERIMENT = "mlflow_experiment_id"
WORKER = "worker"
INTERRUPTED = "interrupted"
LOST = "requeued_because"
RUN_OWN = (MLFLOW_RUN, WORKER, LOST, INTERRUPTED)  # user attrs of one run of a trial: a re-run's are its own
MAX_RETRIES = 3
DEFAULT_HEARTBEAT = 60
# Optuna 5 marks its heartbeat API (interval, fail_stale_trials, the retry callback) experimental; it is
# the documented way to recover lost trials, so its warnings are not shown to users
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)


STRAY = "its worker stopped before it could end this run (tracking server away, killed); its trial has ended"
TAKEN_OVER = "its trial was taken for lost after a heartbeat gap and run again elsewhere"
UNRECORDED = "its run had finished, but its result never reached Optuna: withdrawn"


class TrialTakenOver(Exception):  # noqa: N818
    """This worker's trial was failed and queued again by another process while this one was silent
    (frozen: SIGSTOP, a VM pause, a long swap): its result would be a second one, so it stops here."""


def grace_period(heartbeat: int) -> int:
    """Seconds without a heartbeat after which a running trial counts as lost."""
    return 3 * heartbeat


class StaleTrialHandler:
    """Optuna's heartbeat-stale callback: close the MLflow run, mark the trial, queue it again."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        silent = grace_period(heartbeat_of(storage_of(study)))
        self.requeue(study, trial, f"no heartbeat for {silent} s")

    def requeue(self, study: optuna.Study, trial: FrozenTrial, how: str) -> None:
        """`trial` (already FAIL) lost its worker (`how`): end its MLflow run KILLED and queue it again."""
        retries = len(trial.system_attrs.get(HISTORY, []))
        worker = trial.user_attrs.get(WORKER, "unknown")
        if not point_taken(trial):
            fate = "it had drawn no point yet: nothing to queue again"
        elif retries >= MAX_RETRIES:
            fate = f"not retried after {retries} losses"
        else:
            fate = "queued again with the same parameters"
        reason = f"worker {worker} lost ({how}); {fate}"
        queue_again(study, trial, reason)  # first, so that nothing below can lose it
        try:
            for run_id in self._runs_of(study, trial):
                self.tracker.finish(run_id, "KILLED", reason)
            if trial.user_attrs.get(MLFLOW_RUN):  # finished, but its end never reached Optuna (a worker
                # killed or terminated while telling it: bench/chaos.py): no result of the study
                self.tracker.withdraw(trial.user_attrs[MLFLOW_RUN], f"{reason}; {UNRECORDED}")
        except Exception as exc:  # the tracking server is away: the trial is queued again all the same
            reason = str(exc).splitlines()[0][:200]
            notice(f"warning: could not end the MLflow run of lost trial {trial.number} ({reason}); the "
                   "coordinator ends it when the study ends")  # fmt: skip

    def _runs_of(self, study: optuna.Study, trial: FrozenTrial) -> list[str]:
        """The lost trial's MLflow runs still open (`_open`): the one whose id it recorded, else the one
        found by its parent and `trial` tags (a worker that died between creating its run and recording
        the id)."""
        run_id = trial.user_attrs.get(MLFLOW_RUN)
        if run_id:
            return [run_id] if _open(self.tracker.get_run(run_id)) else []
        attrs = study.user_attrs
        if PARENT_RUN not in attrs or EXPERIMENT not in attrs:
            return []
        runs = self.tracker.trial_children(attrs[EXPERIMENT], attrs[PARENT_RUN], trial.number)
        return [run.info.run_id for run in runs if _open(run)]


def _open(run: Any) -> bool:
    """RUNNING, or ended by the coordinator's sweep (`close_stray_runs`, reason `STRAY`) in the moment
    between Optuna failing the trial and this handler's requeue: the handler's precise reason replaces
    the sweep's guess (seen once in the frozen-worker fault test under load)."""
    return run.info.status == "RUNNING" or run.data.tags.get("error") == STRAY


def point_taken(trial: FrozenTrial) -> bool:
    """Whether `trial` holds a point of the search: parameters drawn or given (an enqueued trial's
    `fixed_params`), or a grid point assigned (the grid sampler assigns it before the objective draws it)."""
    return bool(trial.params) or "fixed_params" in trial.system_attrs or "grid_id" in trial.system_attrs


def queue_again(study: optuna.Study, trial: FrozenTrial, reason: str) -> bool:
    """Queue lost (FAIL) `trial`'s point again as a new WAITING trial: Optuna's
    RetryHeartbeatStaleTrialCallback (the grid point keeps its `grid_id`; the copy's `retry_history` ends
    with `trial`), made once however many processes queue the same lost trial (harness.fleet.once_writes).
    The copy keeps the user attrs, less those of this run and its end, and says why it exists (`reason`).
    False, and nothing queued, for a trial that held no point or whose chain was lost MAX_RETRIES times."""
    if not point_taken(trial) or len(trial.system_attrs.get(HISTORY, [])) >= MAX_RETRIES:
        return False
    queued = copy.deepcopy(trial)
    queued.user_attrs = {k: v for k, v in trial.user_attrs.items() if k not in RUN_OWN} | {LOST: reason}
    RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRIES)(study, queued)
    return True


def stranded(trials: list[FrozenTrial]) -> list[FrozenTrial]:
    """Stopped trials (Ctrl-C, SIGTERM: FAIL, `interrupted`) not queued again: their worker queues them at
    once, unless it was killed first (a SIGKILL right after the SIGTERM: preemption without grace) or the
    database was away; the lost-trial recovery then queues them (`wait_for_others`)."""
    requeued = requeued_numbers(trials)
    enqueued = {t.user_attrs.get("retry_of") for t in trials}  # a restarted study's copies (journal storages)
    return [
        t
        for t in trials
        if t.state == TrialState.FAIL
        and t.user_attrs.get(INTERRUPTED)
        and t.number not in requeued
        and t.number not in enqueued
        and point_taken(t)
        and len(t.system_attrs.get(HISTORY, [])) < MAX_RETRIES
    ]


def requeued_numbers(trials: list[FrozenTrial]) -> set[int]:
    """Numbers of trials that lost their worker and were queued again (they are not errors)."""
    return {number for t in trials for number in t.system_attrs.get(HISTORY, [])}


def heartbeat_of(storage: object) -> int:
    backend = backend_of(storage)
    return int(getattr(backend, "heartbeat_interval", None) or DEFAULT_HEARTBEAT)


def watch(storage: object, tracker: Tracker) -> bool:
    """Attach the handler to a heartbeat storage; False for storages without heartbeats (journal)."""
    backend = heartbeat_backend(storage)
    if backend is None:
        return False
    backend.heartbeat_stale_trial_callback = StaleTrialHandler(tracker)  # type: ignore[attr-defined]
    return True


def requeue_dead_worker(opt: optuna.Study, tracker: Tracker, worker: str, how: str) -> int:
    """A local worker process `worker` (host:pid) exited abnormally: fail its running trials and queue
    them again at once (no need to wait for the heartbeat's grace period). Returns how many."""
    lost = [
        t
        for t in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if t.user_attrs.get(WORKER) == worker
    ]
    return sum(_requeue_running(opt, tracker, trial, how) for trial in lost)


def requeue_interrupted(opt: optuna.Study, tracker: Tracker, worker: str, how: str) -> int:
    """This worker (`worker`, host:pid) was stopped (Ctrl-C, SIGTERM): queue its interrupted trials
    again at once, so that the other workers of a database storage take them over. Returns how many."""
    requeued = requeued_numbers(opt.get_trials(deepcopy=False))
    stopped = [
        t
        for t in opt.get_trials(deepcopy=False, states=(TrialState.FAIL,))
        if t.user_attrs.get(WORKER) == worker and t.user_attrs.get(INTERRUPTED) and t.number not in requeued
    ]
    for trial in stopped:
        StaleTrialHandler(tracker).requeue(opt, copy.deepcopy(trial), how)
    return len(stopped)


def close_stray_runs(opt: optuna.Study, tracker: Tracker) -> int:
    """Trial runs of the study still RUNNING although their Optuna trial is not (its worker stopped before
    it could end the run: the tracking server was away, or the process was killed as the trial ended) end
    KILLED. The coordinator sweeps when it starts and before it closes the parent. Returns how many."""
    attrs = opt.user_attrs
    if PARENT_RUN not in attrs or EXPERIMENT not in attrs:
        return 0
    running = {t.number for t in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,))}
    stray = [
        run
        for run in tracker.running_children(attrs[EXPERIMENT], attrs[PARENT_RUN])
        if not run.data.tags.get("trial", "").isdigit() or int(run.data.tags["trial"]) not in running
    ]
    for run in stray:
        tracker.finish(run.info.run_id, "KILLED", STRAY)
    return len(stray)


def others_running(opt: optuna.Study) -> bool:
    return any(t.state == TrialState.RUNNING for t in opt.get_trials(deepcopy=False))


def others_pending(opt: optuna.Study) -> bool:
    """Whether other workers' trials run, or, on a heartbeat storage, stopped ones wait to be queued again
    (`stranded`; a journal storage's are queued by the next `run-study`)."""
    trials = opt.get_trials(deepcopy=False)
    if any(t.state == TrialState.RUNNING for t in trials):
        return True
    return heartbeat_backend(storage_of(opt)) is not None and bool(stranded(trials))


def wait_for_others(opt: optuna.Study, tracker: Tracker) -> None:
    """One poll while other workers' trials run (or wait to be queued again): fail, and so queue again,
    the trials whose worker is gone: silent past the grace period (Optuna's check), never beating since
    they started two grace periods ago (a worker killed between creating its trial and its first beat:
    Optuna's check skips trials that never beat), and stopped ones whose worker did not queue them again
    within a grace period (`stranded`)."""
    optuna.storages.fail_stale_trials(opt)
    heartbeat = heartbeat_of(storage_of(opt))
    unbeaten = running_unbeaten(storage_of(opt), study_id(opt))
    if unbeaten is not None:  # a heartbeat storage (a journal's lost trials wait for the next run-study)
        _requeue_silent(opt, tracker, unbeaten, grace_period(heartbeat))
    time.sleep(min(5.0, max(0.5, float(heartbeat))))


def _requeue_silent(opt: optuna.Study, tracker: Tracker, unbeaten: set[int], silent: int) -> None:
    """Fail and queue again the RUNNING trials in `unbeaten` (ids) started over 2 x `silent` s ago, and
    queue the `stranded` trials stopped over `silent` s ago."""
    now = datetime.now()
    for trial in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if trial_id(trial) in unbeaten and _older(trial.datetime_start, now, 2 * silent):
            _requeue_running(opt, tracker, trial, f"no heartbeat since it started {2 * silent} s ago")
    for trial in stranded(opt.get_trials(deepcopy=False)):
        if _older(trial.datetime_complete, now, silent):
            how = f"stopped, and not queued again by its worker within {silent} s"
            StaleTrialHandler(tracker).requeue(opt, copy.deepcopy(trial), how)


def _older(moment: datetime | None, now: datetime, seconds: float) -> bool:
    return moment is not None and (now - moment).total_seconds() > seconds


def _requeue_running(opt: optuna.Study, tracker: Tracker, trial: FrozenTrial, how: str) -> bool:
    """Fail a silent RUNNING trial and queue its point again (a trial that held no point yet is failed
    only: its point was never taken, and is drawn again)."""
    try:
        storage_of(opt).set_trial_state_values(trial_id(trial), TrialState.FAIL)
    except optuna.exceptions.UpdateFinishedTrialError:  # another worker was quicker
        return False
    StaleTrialHandler(tracker).requeue(opt, copy.deepcopy(storage_of(opt).get_trial(trial_id(trial))), how)
    return True
