"""Optuna specifics: TPE studies, database storages, and the refusal to resume a changed YAML."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import optuna
import pytest

from harness.errors import HarnessError
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from tests.helpers import child_runs, tiny_study

if TYPE_CHECKING:
    from tests.services import Postgres


@pytest.mark.slow
def test_tpe_study_on_a_database_storage(tmp_path: Path, tiny_bert: Path) -> None:
    path = tiny_study(
        tmp_path, tiny_bert, {"lr": {"low": 1e-5, "high": 1e-3, "log": True}}, name="tpe", max_steps=2
    )
    text = Path(path).read_text() + "sampler: tpe\nn_trials: 2\n"
    Path(path).write_text(text)
    study = load_study(path)
    opt = run_study(study, storage_spec=f"sqlite:///{tmp_path / 'optuna.db'}", progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE", "COMPLETE"]
    assert all(1e-5 <= t.params["lr"] <= 1e-3 for t in opt.trials)
    assert len(child_runs("tpe")) == 2
    again = run_study(study, storage_spec=f"sqlite:///{tmp_path / 'optuna.db'}", progress=False)
    assert len(again.trials) == 2  # nothing left to run


@pytest.mark.slow
def test_changed_yaml_is_not_resumed(tmp_path: Path, tiny_bert: Path) -> None:
    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="changed", max_steps=1)
    run_study(load_study(path), progress=False)
    Path(path).write_text(Path(path).read_text().replace("batch_size: 16", "batch_size: 8"))
    with pytest.raises(HarnessError, match="exists with a different configuration"):
        run_study(load_study(path), progress=False)
    fresh = run_study(load_study(path), fresh=True, progress=False)
    assert [t.state.name for t in fresh.trials] == ["COMPLETE"]


@pytest.mark.slow
def test_seeds_run_every_grid_point_once_per_seed(tmp_path: Path, tiny_bert: Path) -> None:
    import yaml

    path = Path(tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="seeded", max_steps=2))
    config = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**config, "seeds": [1, 2]}))
    study = load_study(str(path))
    assert [r.settings.seed for r in study.grid_runs()] == [1, 2] and study.n_trials == 2
    run_study(study, progress=False)
    runs = child_runs("seeded")
    assert sorted(r.data.params["seed"] for r in runs) == ["1", "2"]
    assert {r.info.status for r in runs} == {"FINISHED"}

    path.write_text(yaml.safe_dump({**config, "seeds": [1], "search": {"seed": [3]}}))
    with pytest.raises(HarnessError, match="not both"):
        load_study(str(path))


@pytest.mark.slow
def test_a_median_pruner_stops_trials_below_the_median(tmp_path: Path, tiny_bert: Path) -> None:
    """Issue 11 item 6: `pruner:` acts on the dev scores trials report at each evaluation."""
    import yaml

    lrs = [1.0e-4, 1.1e-4, 0.9e-4, 1.2e-4, 0.5]  # four alike, one that wrecks the model at its first step
    path = Path(tiny_study(tmp_path, tiny_bert, {"lr": lrs}, name="pruned", max_steps=4, eval_every=1))
    config = yaml.safe_load(path.read_text())
    config["pruner"], config["pruner_startup_trials"] = "median", 1
    path.write_text(yaml.safe_dump(config))
    study = load_study(str(path))
    assert study.pruner == "median"
    opt = run_study(study, progress=False)
    states = [t.state.name for t in opt.trials]
    assert len(states) == 5 and set(states) <= {"COMPLETE", "PRUNED"}
    pruned = [t for t in opt.trials if t.state.name == "PRUNED"]
    assert pruned and all(t.params["lr"] == 0.5 or t.number > 0 for t in pruned)
    runs = {int(r.data.tags["trial"]): r for r in child_runs("pruned")}
    for trial in pruned:  # its MLflow run ends KILLED, saying where and why
        run = runs[trial.number]
        assert run.info.status == "KILLED" and run.data.tags["error"].startswith("pruned at step")
    assert all(runs[t.number].info.status == "FINISHED" for t in opt.trials if t.state.name == "COMPLETE")


def test_a_grid_trial_that_finds_every_point_taken_is_surplus(tmp_path: Path, tiny_bert: Path) -> None:
    """Issue 11 review: past the grid's size, Optuna draws points among the unfinished ones and may hand
    out a running point again. On a journal file such a trial claims a free point (issue 59); with every
    point held it claims none and is marked surplus (ended at once, not counted)."""
    from harness.study.optuna_study import SURPLUS, failed_trials, open_storage, open_study, remaining

    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.9]}, name="surplus"))
    opt = open_study(study, open_storage(str(tmp_path / "optuna.journal")), create=True)
    first, second = opt.ask(), opt.ask()  # points 0 and 1, both running
    third = opt.ask()  # number 2: no point left, Optuna re-draws a running one
    attrs = [opt._storage.get_trial_system_attrs(t._trial_id) for t in (first, second, third)]
    assert not attrs[0].get(SURPLUS) and not attrs[1].get(SURPLUS)
    assert attrs[2][SURPLUS] and "grid_id" not in attrs[2]
    opt.tell(third, state=optuna.trial.TrialState.FAIL)
    assert failed_trials(opt) == ([], []) and remaining(opt, study) == 0


def test_a_lost_trial_whose_rerun_failed_is_not_queued_again(tmp_path: Path, tiny_bert: Path) -> None:
    """The last trial of a lost trial's re-run chain decides: its error stands, no silent re-run."""
    from optuna.distributions import FloatDistribution

    from harness.study.optuna_study import failed_trials, open_storage, open_study, prepare_resume

    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1]}, name="chain"))
    storage = open_storage(str(tmp_path / "optuna.journal"))
    opt = open_study(study, storage, create=True)
    params, dists = {"lambda": 0.1}, {"lambda": FloatDistribution(0.1, 0.1)}
    opt.add_trial(optuna.create_trial(state=optuna.trial.TrialState.FAIL, params=params, distributions=dists))
    opt.add_trial(optuna.create_trial(state=optuna.trial.TrialState.FAIL, params=params, distributions=dists,
                                      system_attrs={"failed_trial": 0, "retry_history": [0]},
                                      user_attrs={"error": "ValueError: boom"}))  # fmt: skip
    assert prepare_resume(opt, storage, local=True) == 0
    failed, _ = failed_trials(opt)
    assert [t.number for t in failed] == [1]
    assert prepare_resume(opt, storage, local=True, retry_failed=True) == 1  # --retry-failed: once


BACKENDS = ["postgres", "journal"]


def _storage_url(request: pytest.FixtureRequest, tmp_path: Path, backend: str, name: str) -> str:
    """A new PostgreSQL database (the session's server), or a journal file beside the test."""
    if backend == "journal":
        return str(tmp_path / f"{name}.journal")
    postgres: Postgres = request.getfixturevalue("postgres")
    postgres.execute(f"CREATE DATABASE {name}")
    return postgres.url(name)


def _grid_with_points_left(tmp_path: Path, tiny_bert: Path, url: str, left: int) -> tuple:
    """A 6-point grid study at `url` whose trials 0 and 2 were lost and re-run by their copies (trials 1
    and 3): trial numbers used up, so points 1 and 3 go to trials past the grid. `left` 1: point 3 is
    taken already. Returns the study spec, the study and the storage URL."""
    from harness.fleet.recovery import queue_again
    from harness.study.optuna_study import open_storage, open_study, suggest

    grid = {"lambda": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}
    study = load_study(tiny_study(tmp_path, tiny_bert, grid, name="ask"))
    opt = open_study(study, open_storage(url, heartbeat=1), create=True)
    for lost in (0, 2):
        trial = opt.ask()
        suggest(trial, study)
        queue_again(opt, opt.tell(trial, state=optuna.trial.TrialState.FAIL), "lost")
        copy = opt.ask()
        assert (trial.number, copy.number) == (lost, lost + 1)
        opt.tell(copy, suggest(copy, study)["lambda"])
    for _ in range(2 + (2 - left)):  # points 4 and 5 (and 1, with one left)
        trial = opt.ask()
        opt.tell(trial, suggest(trial, study)["lambda"])
    return study, opt, url


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_later_trial_drawing_first_does_not_run_the_point_of_an_earlier_one(
    tmp_path: Path, tiny_bert: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    """bench/chaos.py's finding, alone: two trials past the grid, one point left; the later-numbered one
    asks first and takes it, then the earlier one asks. Optuna's draw gives it the same point again (none
    is unvisited), and the yield rule (the later trial of a pair yields) let both run it. Now the second
    to ask finds every point held and yields."""
    from harness.fleet.optuna_access import storage_of, study_id
    from harness.study.optuna_study import SURPLUS, open_storage, open_study

    url = _storage_url(request, tmp_path, backend, f"claims_{os.getpid()}_1")
    study, opt, url = _grid_with_points_left(tmp_path, tiny_bert, url, left=1)
    early, late = (open_study(study, open_storage(url, heartbeat=1), create=False) for _ in range(2))
    first = storage_of(early).create_new_trial(study_id(early))
    second = storage_of(late).create_new_trial(study_id(late))
    later = optuna.trial.Trial(late, second)  # its sampler runs first
    earlier = optuna.trial.Trial(early, first)
    attrs = {t.number: t.system_attrs for t in opt.get_trials(deepcopy=False)}
    assert attrs[later.number]["grid_id"] == 3 and not attrs[later.number].get(SURPLUS)
    assert attrs[earlier.number].get(SURPLUS)
    early.tell(earlier, state=optuna.trial.TrialState.FAIL)
    late.tell(later, state=optuna.trial.TrialState.FAIL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grid_points_past_the_grid_go_to_one_trial_each_when_workers_ask_at_once(
    tmp_path: Path, tiny_bert: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    """The trials past the grid claim free points one at a time (PostgreSQL: under the study's lock; a
    journal file: under an exclusive lock of the file): sixteen workers asking at once for the two points
    left get one each; the other fourteen yield."""
    from harness.study.optuna_study import SURPLUS, open_storage, open_study, remaining

    url = _storage_url(request, tmp_path, backend, f"claims_{os.getpid()}_2")
    study, opt, url = _grid_with_points_left(tmp_path, tiny_bert, url, left=2)
    workers = [open_study(study, open_storage(url, heartbeat=1), create=False) for _ in range(16)]
    start = threading.Barrier(len(workers))

    def ask(worker: optuna.Study) -> int:
        start.wait()
        return worker.ask().number

    with ThreadPoolExecutor(len(workers)) as pool:
        asked = list(pool.map(ask, workers))
    attrs = {t.number: t.system_attrs for t in opt.get_trials(deepcopy=False)}
    claimed = sorted(attrs[n]["grid_id"] for n in asked if not attrs[n].get(SURPLUS))
    assert claimed == [1, 3] and sum(bool(attrs[n].get(SURPLUS)) for n in asked) == 14
    # on a database the grid's values are not copied onto every trial (each worker's cache would hold
    # trials x points)
    assert backend == "journal" or not any("search_space" in a for a in attrs.values())
    assert remaining(opt, study) == 0
    for worker, number in zip(workers, asked, strict=True):  # ended by their workers: their beats stop
        worker.tell(number, state=optuna.trial.TrialState.FAIL)
