"""A study that grows (issue 58 item 1): a change that only adds grid points (values of a searched field,
seeds, new variants; harness.resolve.derived.growth) runs in the same study instead of a derived one.
Its finished trials are kept, each on its point of the grown grid, so only the new points run, and their
MLflow runs stay under the same parent run: the report shows old and new rows in one table.

Optuna's grid sampler knows a trial's point by its index in the grid (`grid_id`) and the grid it was
drawn from (`search_space`); both change when the grid grows. So the stored Optuna study is made again
under its name: the study's attributes (its parent run, experiment, heartbeat) and every ended trial
(complete, pruned or failed: params, values, curves, attributes) copied in trial order, each with its
point's index in the grown grid. Trials still running or waiting are not copied: their points are
unvisited in the grown grid and run again. The copy runs with Ctrl-C and SIGTERM held (never half
made), under the study's coordinator lease (refused while another coordinator runs it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import optuna
from optuna.distributions import CategoricalDistribution
from optuna.storages import BaseStorage
from optuna.trial import FrozenTrial, TrialState, create_trial

from harness.fleet.lease import CoordinatorLease
from harness.fleet.signals import signals_held
from harness.resolve.derived import CONFIG, SEED, growth, implicit_seed, stored_study
from harness.resolve.study_spec import ResolvedStudy, point_key
from harness.study.optuna_study import FINGERPRINT, asked_points, make_pruner, make_sampler

ENDED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL)
GRID_ATTRS = ("grid_id", "search_space")  # Optuna's GridSampler: a trial's point and the grid it was in


def grid_ids(study: ResolvedStudy) -> tuple[dict[str, int], Any]:
    """Each grid point (`point_key` of its values) -> its `grid_id` under the study's own sampler, and the
    `search_space` Optuna records beside it (harness.study.optuna_study.asked_points)."""
    asked = asked_points(study)
    return {point_key(values): attrs["grid_id"] for values, attrs in asked}, asked[0][1]["search_space"]


def grows(study: ResolvedStudy, storage: BaseStorage) -> bool:
    """Whether the storage holds `study`'s name with a configuration that `study` only adds points to."""
    stored = stored_study(storage, study.optuna_name)
    if stored is None or stored.fingerprint == study.fingerprint() or not stored.config:
        return False
    return growth(stored.config, study.config()) is not None


def grow(study: ResolvedStudy, storage: BaseStorage) -> tuple[int, int]:
    """Make the stored study again on the grown grid (see the module's docstring); return (trials kept,
    new grid points)."""
    name = study.optuna_name
    old = optuna.load_study(study_name=name, storage=storage)
    CoordinatorLease(old, f"run-study {study.name} (growing it)").acquire().stop_renewing()  # refused if held
    ids, space = grid_ids(study)
    grown = {field: CategoricalDistribution(values) for field, values in study.grid().items()}
    seeded = with_seed(old, grown)
    # the ended trials on a grid point (not one that yielded its point, SURPLUS: no params), copied before
    # anything is deleted, so that a trial Optuna would refuse stops the growth with the study intact
    ended = [seeded(t) for t in old.get_trials(deepcopy=True) if t.state in ENDED]
    ended = [t for t in ended if point_key(t.params) in ids]
    copies = [_on_grown_grid(t, ids[point_key(t.params)], space, grown) for t in ended]
    attrs = {k: v for k, v in old.user_attrs.items() if k not in (FINGERPRINT, CONFIG)}
    with signals_held():
        optuna.delete_study(study_name=name, storage=storage)
        new = optuna.create_study(study_name=name, storage=storage, sampler=make_sampler(study, 0),
                                  pruner=make_pruner(study), directions=study.directions())  # fmt: skip
        for key, value in [*attrs.items(), (FINGERPRINT, study.fingerprint()), (CONFIG, study.config())]:
            new.set_user_attr(key, value)
        new.add_trials(copies)  # the values' choices grown too: Optuna refuses two in one study
    return len(copies), len(ids) - len({point_key(t.params) for t in ended})


def with_seed(
    old: optuna.Study, grown: dict[str, CategoricalDistribution]
) -> Callable[[FrozenTrial], FrozenTrial]:
    """A trial as a point of the grown grid: where the grid now searches seeds and the old study did not,
    with the seed it ran with (harness.resolve.derived.implicit_seed) among its params."""
    seed = implicit_seed(old.user_attrs.get(CONFIG) or {})
    if SEED not in grown or seed is None:
        return lambda trial: trial

    def seeded(trial: FrozenTrial) -> FrozenTrial:
        if SEED in trial.params or not trial.params:  # a trial that yielded its point has no params
            return trial
        trial.params = {**trial.params, SEED: seed}
        trial.distributions = {**trial.distributions, SEED: grown[SEED]}
        return trial

    return seeded


def _on_grown_grid(
    trial: optuna.trial.FrozenTrial, index: int, space: Any, distributions: dict[str, CategoricalDistribution]
) -> optuna.trial.FrozenTrial:
    """A copy of an ended trial on its point of the grown grid (`index`: its grid_id there)."""
    system = {k: v for k, v in trial.system_attrs.items() if k not in GRID_ATTRS}
    return create_trial(
        state=trial.state,
        values=trial.values if trial.state != TrialState.FAIL else None,
        params=trial.params,
        distributions={name: distributions.get(name, d) for name, d in trial.distributions.items()},
        user_attrs=trial.user_attrs,
        system_attrs={**system, "grid_id": index, "search_space": space},
        intermediate_values=trial.intermediate_values,
    )
