"""Everything Optuna: storage, sampler, the objective, resume, and worker processes.

Storage: a journal file under `.harness/` by default (safe for several local processes), or any RDB
URL given with --storage (PostgreSQL for several machines; heartbeats recover killed workers' trials).
Resume: finished trials are never run again; trials that were interrupted (Ctrl-C, a killed process)
are enqueued again with the same parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import optuna
from optuna.storages import BaseStorage, JournalStorage
from optuna.trial import FrozenTrial, TrialState

from harness.errors import HarnessError, mask_password
from harness.fleet.optuna_access import (
    claim_grid_point,
    claim_grid_point_here,
    is_rdb,
    storage_of,
    study_id,
    trial_id,
)
from harness.fleet.recovery import (  # noqa: F401 (PARENT_RUN re-exported)
    DEFAULT_HEARTBEAT,
    INTERRUPTED,
    PARENT_RUN,
    WORKER,
    grace_period,
    point_taken,
    queue_again,
    requeued_numbers,
)
from harness.fleet.signals import SteadyJournalBackend
from harness.fleet.steady_storage import SteadyRDBStorage
from harness.places import check_journal, default_storage, with_driver
from harness.processes import worker_alive
from harness.resolve.derived import CONFIG, changes_between
from harness.resolve.study_spec import Range, ResolvedStudy

FINGERPRINT = "fingerprint"
SURPLUS = "surplus"  # a grid trial that found its point taken (ResumableGridSampler); not a real trial


def open_storage(
    spec: str | None = None, heartbeat: int = DEFAULT_HEARTBEAT, create: bool = True
) -> BaseStorage:
    """An RDB URL (sqlite://, postgresql://, mysql://, with or without the driver named) or a journal
    file path.

    RDB storages record a heartbeat every `heartbeat` seconds for each running trial (harness.fleet.recovery);
    `create=False` (workers) refuses a journal file that does not exist instead of creating it.
    """
    spec = spec or default_storage()
    if "://" in spec:
        try:
            url = with_driver(spec)
        except HarnessError as exc:
            raise HarnessError(f"cannot open Optuna storage {mask_password(spec)}: {exc}") from None
        try:
            return SteadyRDBStorage(url, heartbeat, grace_period(heartbeat))
        except HarnessError:
            raise
        except Exception as exc:
            reason = str(exc).splitlines()[0]
            if "Failed to import DB access module" in reason or isinstance(exc, ImportError):
                reason = f"no database driver for {spec.split('://', 1)[0]!r}; install its driver"
            elif "password authentication failed" in reason or "no password supplied" in reason:
                reason += "; set PGPASSWORD or ~/.pgpass (PGPASSFILE) to the database user's password"
            else:
                reason += "; check that the database server runs and the URL's host, port, database and user"
            raise HarnessError(f"cannot open Optuna storage {mask_password(spec)}: {reason}") from None
    return JournalStorage(SteadyJournalBackend(str(check_journal(spec, create))))


class ResumableGridSampler(optuna.samplers.GridSampler):
    """Optuna's GridSampler minus its stop logic, which the runner does itself (`remaining`), and with the
    points past the first `n` trials claimed, not drawn.

    GridSampler.after_trial stops the study once the grid is visited and raises KeyError for an
    enqueued trial (no grid_id) when one grid point is left, so re-queued interrupted trials break it.
    Trial n gets point n; re-queued trials use up numbers, so the last points go to trials numbered past
    the grid, which GridSampler draws at random from those not yet started: several workers asking at
    once draw the same one (at the end of a busy grid, 16 workers drew among 17 points, bench/chaos.py).
    On a database storage such a trial claims the lowest free point under the study's lock
    (harness.fleet.optuna_access.claim_grid_point), on a journal file under an exclusive lock of the
    file (claim_grid_point_here), or, with none free, yields (SURPLUS: ended at once, not counted).

    On a database storage a trial records its `grid_id` only: GridSampler also records the whole grid
    (`search_space`) on every trial, which every worker's cache of the study then holds, memory growing as
    trials x grid values (bench/chaos.py: 64 workers of a 2048-point grid took 24 GB, and the kernel
    killed workers). The grid's order is GridSampler's (shuffled with the study's seed)."""

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState, values: Any) -> None:
        return None

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        storage = storage_of(study)
        if "grid_id" in trial.system_attrs or "fixed_params" in trial.system_attrs:
            return  # enqueued with its parameters, or a lost trial's re-run: its point is its own
        points = self._n_min_trials
        if trial.number < points and not is_rdb(storage):
            super().before_trial(study, trial)  # point n for trial n, and the grid (harness.study.growth)
            self._yield_if_taken(study, trial)  # a grown study's kept trials may hold point n already
        elif trial.number < points:  # on a database the point only, not the grid (memory: the docstring)
            storage.set_trial_system_attr(trial_id(trial), "grid_id", trial.number)
        else:  # past the grid: the lowest free point, claimed one at a time
            claim = claim_grid_point if is_rdb(storage) else claim_grid_point_here
            if claim(storage, study_id(study), trial_id(trial), points, SURPLUS) is None:
                storage.set_trial_system_attr(trial_id(trial), SURPLUS, True)

    def _yield_if_taken(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """A trial given point n by its number yields when another trial holds that point (a grown study's
        kept trials sit at their points in the new grid, harness.study.growth); of two running trials on
        one point the later one yields."""
        storage = storage_of(study)
        point = storage.get_trial(trial_id(trial)).system_attrs.get("grid_id")
        for other in storage.get_all_trials(study_id(study), deepcopy=False):
            if other.number == trial.number or other.system_attrs.get("grid_id") != point:
                continue
            if other.system_attrs.get(SURPLUS) or other.state == TrialState.FAIL:
                continue  # yielded itself, or failed (an error is kept, a lost trial is re-run)
            if other.state != TrialState.RUNNING or other.number < trial.number:
                storage.set_trial_system_attr(trial_id(trial), SURPLUS, True)
                return


def grid_seed(study: ResolvedStudy) -> int:
    """The grid sampler's seed (the same for every worker: it fixes the grid's shuffled order)."""
    return int(study.base.get("seed", 42))


def asked_points(study: ResolvedStudy) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The grid points a new study's trials get, in trial order, each with the system attributes Optuna
    records beside it (`grid_id`, `search_space`): asked of the study's own sampler over an in-memory
    study, which writes nothing, rather than reproduced, so they follow Optuna should its rule change
    (its GridSampler shuffles the grid, fields sorted by name, with the study's seed)."""
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no "A new study created in memory" line
    try:
        opt = optuna.create_study(sampler=make_sampler(study, grid_seed(study)), direction="maximize")
        points = []
        for _ in range(study.n_trials):
            trial = opt.ask()
            points.append((suggest(trial, study), dict(opt.trials[-1].system_attrs)))
            opt.tell(trial, 0.0)
    finally:
        optuna.logging.set_verbosity(verbosity)
    return points


def make_sampler(study: ResolvedStudy, seed: int) -> optuna.samplers.BaseSampler:
    if study.sampler == "grid":
        return ResumableGridSampler(study.grid(), seed=seed)
    if study.sampler == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)  # several objectives: its multi-objective TPE


def make_pruner(study: ResolvedStudy) -> optuna.pruners.BasePruner:
    """The study's pruner over the dev scores trials report at each evaluation (step = training step)."""
    if study.pruner == "median":
        return optuna.pruners.MedianPruner(n_startup_trials=study.pruner_startup_trials)
    return {
        "none": optuna.pruners.NopPruner,
        "hyperband": optuna.pruners.HyperbandPruner,
        "successive_halving": optuna.pruners.SuccessiveHalvingPruner,
    }[study.pruner]()


def open_study(study: ResolvedStudy, storage: BaseStorage, create: bool, worker: int = 0) -> optuna.Study:
    """Create (coordinator) or load (worker) the Optuna study; refuse to resume a changed YAML.

    Grid workers share one seed (it fixes the grid's shuffled order; Optuna assigns grid point
    `trial.number`, so workers do not collide). TPE workers get their own seeds, or concurrent
    workers would propose the same candidate.
    """
    seed = grid_seed(study) + (worker if study.sampler != "grid" else 0)
    name = study.optuna_name
    if create:
        opt = optuna.create_study(
            study_name=name,
            storage=storage,
            sampler=make_sampler(study, seed),
            pruner=make_pruner(study),
            directions=study.directions(),
            load_if_exists=True,
        )
        stored = opt.user_attrs.get(FINGERPRINT)
        if stored is None:
            opt.set_user_attr(FINGERPRINT, study.fingerprint())
        elif (
            stored != study.fingerprint()
        ):  # harness.resolve.derived names a changed study: reached only in a race
            raise HarnessError(
                f"study {name} exists with a different configuration ({_changed(opt, study)}), made while "
                "this command started; run the command again"
            )
        if CONFIG not in opt.user_attrs:  # a study made before configurations were stored gets it now
            opt.set_user_attr(CONFIG, study.config())
        return opt
    try:
        opt = optuna.load_study(
            study_name=name, storage=storage, sampler=make_sampler(study, seed), pruner=make_pruner(study)
        )
    except KeyError:
        raise HarnessError(f"no study {name} in this storage; start it with `harness run-study`") from None
    stored = opt.user_attrs.get(FINGERPRINT)
    if stored is not None and stored != study.fingerprint():
        raise HarnessError(
            f"study {name} in this storage was made from a different configuration ({_changed(opt, study)}); "
            "give the worker the same study YAML, profile, --set and --search as `harness run-study`"
        )
    return opt


def _changed(opt: optuna.Study, study: ResolvedStudy) -> str:
    """`max_steps 5 -> 10`: what differs from the stored study's configuration, where it was stored."""
    stored = opt.user_attrs.get(CONFIG)
    if not stored:
        return "which fields is unknown: it predates recorded configurations"
    return "; ".join(str(change) for change in changes_between(stored, study.config())) or "no field"


def suggest(trial: optuna.Trial, study: ResolvedStudy) -> dict[str, Any]:
    """This trial's values for every searched field."""
    values: dict[str, Any] = {}
    for name, space in study.search.items():
        if isinstance(space, Range):
            if space.int:
                values[name] = trial.suggest_int(
                    name, int(space.low), int(space.high), log=space.log, step=int(space.step or 1)
                )
            else:
                values[name] = trial.suggest_float(
                    name, space.low, space.high, log=space.log, step=space.step
                )
        else:
            values[name] = trial.suggest_categorical(name, space)
    return values


def is_surplus(trial: FrozenTrial) -> bool:
    return bool(trial.system_attrs.get(SURPLUS))


def _failed_by_itself(trial: FrozenTrial, requeued: set[int]) -> bool:
    """FAIL by an error of its own: not stopped by Ctrl-C, nor by a lost worker (`requeued`: it was
    re-queued), nor a surplus grid trial, nor one failed as lost before it held a point (no parameters,
    no grid point, no error: its point was never taken, and is drawn again)."""
    no_fault = bool(trial.user_attrs.get(INTERRUPTED)) or trial.number in requeued or is_surplus(trial)
    never_began = not point_taken(trial) and "error" not in trial.user_attrs
    return trial.state == TrialState.FAIL and not no_fault and not never_began


def _counted(trial: FrozenTrial, requeued: set[int]) -> bool:
    """Trials that used up a slot: finished ones, running ones, and failures of their own."""
    if trial.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING):
        return True
    return _failed_by_itself(trial, requeued)


def remaining(opt: optuna.Study, study: ResolvedStudy) -> int:
    """How many trials are still to start (waiting ones included)."""
    trials = opt.get_trials(deepcopy=False)
    waiting = sum(t.state == TrialState.WAITING for t in trials)
    if study.sampler == "grid":
        visited = {
            t.system_attrs["grid_id"]
            for t in trials
            if "grid_id" in t.system_attrs and t.state != TrialState.WAITING
        }
        return waiting + max(0, study.n_trials - len(visited))
    requeued = requeued_numbers(trials)
    used = sum(_counted(t, requeued) for t in trials)
    return max(waiting, study.n_trials - used)


def unfinished(opt: optuna.Study, study: ResolvedStudy) -> int:
    """Trials not ended yet: still to start, or still marked running (by a worker that may be gone)."""
    running = sum(t.state == TrialState.RUNNING for t in opt.get_trials(deepcopy=False))
    return remaining(opt, study) + running


def done_count(opt: optuna.Study) -> int:
    return sum(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in opt.get_trials(deepcopy=False))


def failed_trials(opt: optuna.Study) -> tuple[list[FrozenTrial], list[FrozenTrial]]:
    """(failed, skipped): trials that ended in an error, and those skipped for want of an optional input
    (a GloVe vectors file); interrupted ones are left out (a re-run queues them again by itself)."""
    trials = opt.get_trials(deepcopy=False)
    requeued = requeued_numbers(trials)
    ended = [t for t in trials if _failed_by_itself(t, requeued)]
    return [t for t in ended if "skipped" not in t.user_attrs], [
        t for t in ended if "skipped" in t.user_attrs
    ]


@dataclass(frozen=True)
class BestConfiguration:
    """The configuration with the best mean objective over its seeds (a study without seeds: the best
    trial): its searched values but the seed, and each seed's trial number and value."""

    params: dict[str, Any]
    trials: list[int]
    values: list[float]
    seeds: list[Any]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def std(self) -> float:
        """The sample standard deviation over seeds (n - 1), 0 for one seed."""
        n = len(self.values)
        return math.sqrt(sum((v - self.mean) ** 2 for v in self.values) / (n - 1)) if n > 1 else 0.0


def best_configuration(opt: optuna.Study) -> BestConfiguration | None:
    """The best configuration on the seed mean of the completed trials (a seed's best trial alone would be
    chosen for its luck); None when no trial completed, or when the study has several objectives (its
    result is the Pareto front: `pareto_front`)."""
    if len(opt.directions) > 1:
        return None
    groups: dict[tuple[tuple[str, str], ...], list[FrozenTrial]] = {}
    for trial in opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        config = {k: v for k, v in trial.params.items() if k != "seed"}
        groups.setdefault(_key(config), []).append(trial)
    if not groups:
        return None
    best = max(groups.values(), key=lambda ts: sum(t.value for t in ts) / len(ts))  # type: ignore[misc]
    best = sorted(best, key=lambda t: t.number)
    return BestConfiguration(
        {k: v for k, v in best[0].params.items() if k != "seed"},
        [t.number for t in best],
        [float(t.value) for t in best],  # type: ignore[arg-type]
        [t.params.get("seed") for t in best],
    )


def best_value(opt: optuna.Study) -> float:
    """The best objective so far (NaN before any trial completed, and for several objectives)."""
    if len(opt.directions) > 1:
        return math.nan
    # a completed trial of one objective has its value
    values = [cast(float, t.value) for t in opt.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))]
    return max(values) if values else math.nan


def pareto_front(opt: optuna.Study) -> list[FrozenTrial]:
    """The completed trials no other completed trial dominates (Optuna's `best_trials`: at least as good in
    every objective's direction and better in one), by trial number."""
    return sorted(opt.best_trials, key=lambda t: t.number)


def prepare_resume(opt: optuna.Study, storage: BaseStorage, local: bool, retry_failed: bool = False) -> int:
    """Re-enqueue interrupted trials' parameters; return how many were enqueued.

    `local` (journal store, no heartbeats): RUNNING trials whose worker process on this host is gone, or
    that never reached a worker, are failed as interrupted; workers still alive (of a coordinator that
    was killed) keep theirs. RDB stores rely on heartbeats instead.
    """
    if local:
        study_id = storage.get_study_id_from_name(opt.study_name)
        for t in opt.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if WORKER in t.user_attrs and worker_alive(t.user_attrs[WORKER]):
                continue
            trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, t.number)
            storage.set_trial_user_attr(trial_id, INTERRUPTED, True)
            storage.set_trial_state_values(trial_id, TrialState.FAIL)
    else:  # heartbeats: trials of dead workers are failed and queued again (harness.fleet.recovery)
        optuna.storages.fail_stale_trials(opt)
    trials = opt.get_trials(deepcopy=False)
    covered = {
        _key(t.params)
        for t in trials
        if t.state in (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)
    }
    covered |= {
        _key(t.params or t.system_attrs.get("fixed_params", {}))
        for t in trials
        if t.state == TrialState.WAITING
    }
    requeued = requeued_numbers(trials)
    enqueued = 0
    for t in trials:
        # a lost trial's re-run stands for it (the chain's last trial decides); a surplus one is no trial
        if t.state != TrialState.FAIL or t.number in requeued or is_surplus(t):
            continue
        if not (t.user_attrs.get(INTERRUPTED) or retry_failed):
            continue
        if not t.params or _key(t.params) in covered:
            continue
        # on a heartbeat storage a stopped trial is queued as its worker or a waiting one would queue it,
        # so that the three make one copy between them (harness.fleet.recovery.queue_again)
        rerun = not local and t.user_attrs.get(INTERRUPTED)
        if not (rerun and queue_again(opt, t, "interrupted; queued again by the restarted study")):
            opt.enqueue_trial(t.params, user_attrs={"retry_of": t.number})
        covered.add(_key(t.params))
        enqueued += 1
    return enqueued


def _key(params: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def finished_points(storage: BaseStorage, optuna_name: str, seeded: bool = False) -> list[dict[str, Any]]:
    """The searched values of every trial of the stored study `optuna_name` that finished (complete or
    pruned: a re-run does not run it again); none where the storage holds no such study. `seeded`: the
    grid now searches seeds; a trial of a study that searched none gets the seed it ran with
    (harness.resolve.derived.implicit_seed), as growing the study gives it (harness.study.growth)."""
    from harness.resolve.derived import CONFIG, SEED, implicit_seed

    try:
        stored = storage.get_study_id_from_name(optuna_name)
    except KeyError:
        return []
    seed = implicit_seed(storage.get_study_user_attrs(stored).get(CONFIG) or {}) if seeded else None
    ended = (TrialState.COMPLETE, TrialState.PRUNED)
    points = [dict(t.params) for t in storage.get_all_trials(stored, deepcopy=False, states=ended)]
    return [{**p, SEED: seed} if seed is not None and p and SEED not in p else p for p in points]
