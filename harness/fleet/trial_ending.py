"""How a trial ends, whatever ends it: the one layer of fault handling around a trial's train -> evaluate
-> log (harness.study.trial) and around Optuna's call of it (harness.study.runner).

`run_ends_with_the_trial` ends the trial's MLflow run: FINISHED, FAILED (the error as a tag, the traceback
as `error.txt`) or KILLED (Ctrl-C or SIGTERM; skipped, the TrialSkipped notice as its `error` tag; pruned,
the step and score; the Optuna database gone; its trial taken for lost while this worker was frozen),
never RUNNING. An MLflow server that stays away past MLflow's retries leaves the run as it is (nothing can
reach it): ServiceUnavailable, which sends the trial back to the queue.

`told_to_the_study` puts what ended a trial on its Optuna trial (`error`, `skipped`, interrupted) and says
it on the terminal; `optimize_one` runs one trial through Optuna and takes Optuna's refusals to record a
trial another process took for lost as that (its run withdrawn), not as a failure of the worker."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import optuna
from optuna.trial import TrialState

from harness.errors import ServiceUnavailable, TrialSkipped
from harness.fleet.optuna_access import state_now
from harness.fleet.pause_points import reached
from harness.fleet.recovery import INTERRUPTED, MLFLOW_RUN, TAKEN_OVER, TrialTakenOver
from harness.fleet.signals import signals_held, stop_reason
from harness.tracking.tracker import LoggedRun, Tracker, tracking_outage

T = TypeVar("T")


def first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else ""


def reached_tracking(call: Callable[[], T]) -> T:
    """`call()` (a write to MLflow); a tracking server that stayed away is the stop it is."""
    try:
        return call()
    except Exception as exc:
        outage = tracking_outage(exc)
        if outage is not None:
            raise outage from None
        raise


def written(write: Callable[..., Any], *args: str) -> None:
    """`write(*args)`, one of the writes that end a trial's run; a tracking server that stayed away is the
    stop it is (reached_tracking)."""
    reached_tracking(lambda: write(*args))


@contextlib.contextmanager
def run_ends_with_the_trial(run: LoggedRun, still_ours: Callable[[], bool]) -> Iterator[None]:
    """The trial's MLflow run ends as the block does (see the module's docstring); a block that ends
    normally after another process took the trial for lost (a heartbeat gap) is not a second result. A
    tracking server that stays away while the run is being ended is an outage too (bench/chaos.py: a
    busy server's answer to the closing FINISHED, past the retry window, failed two trials and lost their
    points); only a stop (Ctrl-C, SIGTERM) stays a stop, the run left to the stray-run sweep."""
    try:
        yield
    except KeyboardInterrupt as exc:
        with contextlib.suppress(ServiceUnavailable):
            written(run.finish, "KILLED", f"{stop_reason(exc)}; re-run the study to run this trial again")
        raise
    except ServiceUnavailable as exc:  # the Optuna database is gone: the trial goes back to the queue
        with contextlib.suppress(Exception):  # and MLflow may have gone with it (one PostgreSQL)
            run.finish("KILLED", f"stopped: {exc}")
        raise
    except TrialTakenOver as exc:  # a frozen worker woke: the lost-trial handler's KILLED and reason stand
        written(run.finish_unless_ended, "KILLED", str(exc))
        raise
    except TrialSkipped as exc:
        written(run.finish, "KILLED", f"skipped: {exc}")
        raise
    except optuna.TrialPruned as exc:  # the study's pruner stopped it (its dev scores so far are logged)
        written(run.finish, "KILLED", str(exc))
        raise
    except BaseException as exc:
        outage = tracking_outage(exc)
        if outage is not None:  # nothing can be written to MLflow; the trial goes back to the queue
            raise outage from None
        written(run.log_text, traceback.format_exc(), "error.txt")
        written(run.finish, "FAILED", f"{type(exc).__name__}: {first_line(exc)}")
        raise
    if not still_ours():
        written(run.finish_unless_ended, "KILLED", TAKEN_OVER)
        # raised, not returned: Optuna 5.0 refuses to tell a failed trial a value and, with no error of the
        # objective to log, ends `_run_trial` in `assert False` (optuna/study/_optimize.py); a raised error
        # makes it log the trial as failed and raise the refusal, which `optimize_one` takes for lost
        raise TrialTakenOver(TAKEN_OVER)
    written(run.finish, "FINISHED")


@contextlib.contextmanager
def marked_if_stopped(trial: optuna.Trial) -> Iterator[None]:
    """A stop (Ctrl-C, SIGTERM) in the block marks the trial interrupted, so that it is queued again rather
    than counted as a failure with no reason (bench/chaos.py: a SIGTERM between the objective's start and
    its run lost the trial's grid point)."""
    try:
        yield
    except KeyboardInterrupt:
        trial.set_user_attr(INTERRUPTED, True)
        raise


@contextlib.contextmanager
def told_to_the_study(trial: optuna.Trial, say: Callable[[str], None]) -> Iterator[None]:
    """What ended the trial, on its Optuna trial and the terminal; the exception goes on to Optuna."""
    try:
        yield
    except optuna.TrialPruned as exc:
        say(f"trial {trial.number} {exc}")
        raise
    except TrialTakenOver:
        say(f"trial {trial.number}: {TAKEN_OVER}; this worker's result is dropped")
        raise
    except KeyboardInterrupt:
        trial.set_user_attr(INTERRUPTED, True)
        raise
    except TrialSkipped as exc:  # something optional is missing: a failed trial that says what to give
        trial.set_user_attr("skipped", str(exc)[:1000])
        say(f"trial {trial.number} skipped: {exc}")
        raise
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        trial.set_user_attr("error", reason[:1000])
        say(f"trial {trial.number} failed: {reason.splitlines()[0]}")
        raise


def optimize_one(
    opt: optuna.Study, objective: Callable[[optuna.Trial], Any], tracker: Tracker, say: Callable[[str], None]
) -> None:
    """One trial of `opt` through Optuna (its failures recorded on the trial, not raised). Optuna refuses
    to record the end of a trial another process took for lost: a ValueError or, when the objective
    returned a value (the trial was taken after the trial's last look), Optuna 5.0's `assert False` in
    `_run_trial`; then the trial's run, if it ended FINISHED, is withdrawn: not a result of the study. A
    trial taken before it began (this worker slow between creating it and its first write, behind a
    database restart or a network cut: another worker failed it as silent and queued its point again,
    harness.fleet.recovery.wait_for_others) is left to that re-run: nothing ran, nothing is lost."""
    running: list[optuna.Trial] = []
    telling = contextlib.ExitStack()

    def remembered(trial: optuna.Trial) -> Any:
        running.append(trial)
        value = objective(trial)
        # a SIGTERM from here on acts once Optuna has recorded the value: its run is FINISHED already, and
        # a worker stopped between the two would leave a finished run of a trial taken for lost
        telling.enter_context(signals_held())
        reached("trial_valued")
        return value

    try:
        with telling:
            opt.optimize(remembered, n_trials=1, catch=(Exception,), gc_after_trial=True)
    except optuna.exceptions.UpdateFinishedTrialError:
        if running:  # taken during the objective: the objective's own handling said so
            raise
        say(
            "the trial this worker had just created was taken for lost by another before it started; "
            "its point runs again there"
        )
    except (ValueError, AssertionError):
        if not running or state_now(opt, running[0]) != TrialState.FAIL:
            raise
        run_id = running[0].user_attrs.get(MLFLOW_RUN)
        if run_id:  # withdrawn here, unless the lost-trial handler already did
            tracker.withdraw(run_id, TAKEN_OVER)
            say(f"trial {running[0].number}: {TAKEN_OVER}; this worker's result is dropped")
