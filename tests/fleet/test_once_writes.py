"""harness.fleet.once_writes on a real PostgreSQL, behind a proxy that loses the answer to chosen COMMITs
(tests/fault_proxy.py): the write is committed, the client sees its connection break and retries. Trials
made, taken from the queue and ended over such commits each happen once; Optuna's own storage under the
same fault makes an extra trial (so the fault is the one the ids guard against)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from harness.fleet.once_writes import CREATION_ID, STATE_WRITE_ID
from harness.study.optuna_study import open_storage
from tests.fault_proxy import CommitDropProxy
from tests.helpers import harness_here, tiny_study
from tests.services import Postgres

CREATE = b"INSERT INTO trials ("
TAKE = b"UPDATE trials SET state='RUNNING'"
END = b"UPDATE trials SET state='COMPLETE'"
_databases = itertools.count()


@pytest.fixture
def behind_proxy(postgres: Postgres) -> Iterator[tuple[CommitDropProxy, str, str]]:
    """A proxy to the session's PostgreSQL, the URL of a new database through it, and the direct URL."""
    database = f"once_{next(_databases)}"
    postgres.execute(f"CREATE DATABASE {database}")
    with CommitDropProxy(postgres.port) as proxy:
        yield proxy, proxy.url(postgres.user, database), postgres.url(database)


def _direct(url: str, name: str) -> list[optuna.trial.FrozenTrial]:
    return optuna.load_study(study_name=name, storage=RDBStorage(url)).get_trials(deepcopy=False)


@pytest.mark.slow
def test_trials_made_taken_and_ended_over_lost_commit_answers_happen_once(
    behind_proxy: tuple[CommitDropProxy, str, str],
) -> None:
    proxy, through, direct = behind_proxy
    study = optuna.create_study(study_name="once", storage=open_storage(through))
    proxy.arm(CREATE, times=3)
    asked = [study.ask() for _ in range(3)]
    assert proxy.dropped == 3
    proxy.arm(END, times=3)
    for index, trial in enumerate(asked):
        study.tell(trial, float(index))  # a retried end would raise "already finished"
    assert proxy.dropped == 6
    study.enqueue_trial({"x": 0.25})  # a queued trial, taken by a worker over a lost answer
    proxy.arm(TAKE, times=1)
    taken = study.ask()
    assert proxy.dropped == 7 and taken.suggest_float("x", 0, 1) == 0.25  # the take answered True
    study.tell(taken, 3.0)

    trials = _direct(direct, "once")
    assert [t.number for t in trials] == [0, 1, 2, 3]  # no extra trial
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 4
    assert [t.value for t in trials] == [0.0, 1.0, 2.0, 3.0] and trials[3].params == {"x": 0.25}
    assert all(CREATION_ID in t.system_attrs and STATE_WRITE_ID in t.system_attrs for t in trials)


@pytest.mark.slow
def test_optunas_own_storage_makes_an_extra_trial_under_the_same_fault(
    behind_proxy: tuple[CommitDropProxy, str, str],
) -> None:
    """Optuna's RDBStorage retries a failed creation commit itself and makes the trial again: the first
    copy stays RUNNING with nobody running it. This is what the creation id prevents."""
    proxy, through, direct = behind_proxy
    study = optuna.create_study(study_name="plain", storage=RDBStorage(through))
    proxy.arm(CREATE, times=1)
    study.ask()
    assert proxy.dropped == 1
    assert [t.state for t in _direct(direct, "plain")] == [TrialState.RUNNING, TrialState.RUNNING]


@pytest.mark.slow
def test_a_study_made_or_deleted_over_a_lost_answer_is_made_or_deleted_once(
    behind_proxy: tuple[CommitDropProxy, str, str],
) -> None:
    proxy, through, direct = behind_proxy
    storage = open_storage(through)
    proxy.arm(b"INSERT INTO studies (", times=1)
    made = storage.create_new_study([optuna.study.StudyDirection.MAXIMIZE], "made_once")
    assert proxy.dropped == 1 and RDBStorage(direct).get_study_id_from_name("made_once") == made
    proxy.arm(b"DELETE FROM studies ", times=1)
    storage.delete_study(made)  # the retry finds no study: done, not KeyError
    assert proxy.dropped == 2 and [s.study_name for s in optuna.get_all_study_summaries(direct)] == []


@pytest.mark.slow
def test_a_study_run_over_lost_commit_answers_runs_each_grid_point_once(
    behind_proxy: tuple[CommitDropProxy, str, str], tmp_path: Path, tiny_bert: Path
) -> None:
    """`harness run-study` on the proxied database: trial creations and ends lose their answers; each grid
    point ends COMPLETE once, with no extra trial and no error."""
    proxy, through, direct = behind_proxy
    grid = [0.1, 0.2, 0.3]
    study = tiny_study(tmp_path, tiny_bert, {"lambda": grid}, name="once_study", max_steps=2, eval_every=2)
    proxy.arm(CREATE, times=2)
    proxy.arm(END, times=2)
    result = harness_here("run-study", study, "--storage", through, "--no-progress")
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert proxy.dropped == 4
    trials = _direct(direct, "once_study.tiny")
    assert sorted(t.params["lambda"] for t in trials) == grid  # one trial a point: none made twice
    assert {t.state for t in trials} == {TrialState.COMPLETE}


@pytest.mark.parametrize("storage_class", ["optuna", "harness"])
def test_state_changes_answer_as_optunas_own(storage_class: str, tmp_path: Path) -> None:
    """SteadyRDBStorage writes set_trial_state_values itself (with its id): the same answers as Optuna's
    RDBStorage for a take of a queued trial, a take of a running one, an end with values, and a change
    to an ended trial."""
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    storage = RDBStorage(url) if storage_class == "optuna" else open_storage(url)
    study = optuna.create_study(study_name="states", storage=storage, directions=["maximize", "minimize"])
    study.enqueue_trial({})
    (queued,) = study.get_trials(deepcopy=False)
    set_state = storage.set_trial_state_values
    assert set_state(queued._trial_id, TrialState.RUNNING) is True
    assert set_state(queued._trial_id, TrialState.RUNNING) is False  # taken already
    assert set_state(queued._trial_id, TrialState.COMPLETE, [1.5, -2.0]) is True
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        set_state(queued._trial_id, TrialState.FAIL)
    (ended,) = study.get_trials(deepcopy=False)
    assert ended.state == TrialState.COMPLETE and ended.values == [1.5, -2.0]
    assert ended.datetime_start is not None and ended.datetime_complete is not None
