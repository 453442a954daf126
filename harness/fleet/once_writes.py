"""Storage writes that apply once when they are retried: the client-made ids that make them so.

harness.fleet.steady_storage retries every storage call that failed for want of the database. When the
connection broke after the server committed a write but before its answer arrived, the client cannot tell
from the error whether the write happened. For the writes whose second application differs from the
first, the write carries an id made by the client, stored in the same transaction, and a retry looks for
its id before writing:

- **creating a trial** (`ask`, `enqueue_trial`, the re-queue of a lost trial): the trial system attribute
  `harness:creation_id`. A retry that finds a trial of the study with its id returns that trial instead of
  making another. Optuna's `RDBStorage._create_new_trial` also retries by itself, up to five times, on any
  commit error (optuna/storages/_rdb/storage.py, "Retry maximum five times"): those attempts go through the
  same look-up.
- **re-running a lost trial** (harness.fleet.recovery: the heartbeat callback of whichever worker found
  it, the stopped worker itself, a waiting worker's sweep, a restarted coordinator): the creation id is
  `rerun-of:N`, N the lost trial's number (the last of the template's `retry_history`), and the look-up
  runs on every attempt, inside the creation transaction that locks the study's row: however many
  processes queue trial N again, one copy is made.
- **a trial's state change** (`set_trial_state_values`: WAITING -> RUNNING when a worker takes a queued
  trial, RUNNING -> COMPLETE / FAIL / PRUNED with its values): the trial system attribute
  `harness:state_write_id`, written with the state. A retry that finds its id answers True, as the lost
  answer did. Without it a retried take answers False (as if another worker had taken the trial), leaving
  the trial RUNNING with no worker and no heartbeat, and a retried end raises "already finished".
- **creating and deleting a study**: the study's name is its id. A retried creation that finds the name
  returns that study; a retried deletion that finds no study is done.

Attributes, parameters, intermediate values and heartbeats need nothing: each is an upsert of the same
value. The look-up runs only on a retry (an id this process has tried before), so a write that succeeds at
once pays one attribute row and no query.
"""

from __future__ import annotations

import copy
import uuid
from datetime import datetime

from optuna.trial import FrozenTrial, TrialState

CREATION_ID = "harness:creation_id"
STATE_WRITE_ID = "harness:state_write_id"
HISTORY = "retry_history"  # Optuna's RetryHeartbeatStaleTrialCallback: the lost trials a copy re-runs
RERUN = "rerun-of:"


def new_id() -> str:
    return uuid.uuid4().hex


def rerun_id(template: FrozenTrial | None) -> str | None:
    """`rerun-of:N` for the copy of lost trial N (a template whose `retry_history` ends with N), else None."""
    history = template.system_attrs.get(HISTORY) if template is not None else None
    return f"{RERUN}{history[-1]}" if history else None


def is_rerun_id(made_id: str) -> bool:
    return made_id.startswith(RERUN)


def with_creation_id(template: FrozenTrial | None, made_id: str) -> FrozenTrial:
    """The template Optuna creates the trial from, carrying `made_id`. No template: the trial Optuna makes
    without one (RUNNING, started now, nothing set)."""
    if template is None:
        template = FrozenTrial(
            number=-1,
            state=TrialState.RUNNING,
            value=None,
            datetime_start=datetime.now(),
            datetime_complete=None,
            params={},
            distributions={},
            user_attrs={},
            system_attrs={},
            intermediate_values={},
            trial_id=-1,
        )
    else:
        template = copy.deepcopy(template)
    template.system_attrs = {**template.system_attrs, CREATION_ID: made_id}
    return template


class Attempts:
    """The write ids this process has sent at least once: a second attempt with one is a retry."""

    def __init__(self) -> None:
        self._sent: set[str] = set()

    def retried(self, made_id: str) -> bool:
        """Whether `made_id` was sent before; records that it is being sent now."""
        if made_id in self._sent:
            return True
        self._sent.add(made_id)
        return False

    def forget(self, made_id: str) -> None:
        self._sent.discard(made_id)
