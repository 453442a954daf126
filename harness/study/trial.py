"""One trial: a child run of the study's parent, in which the configuration is trained, evaluated and
logged (harness.study.train_evaluate_log), ended as the trial ends (harness.fleet.trial_ending)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
import yaml

from harness.device import hardware_tags, pick_device
from harness.errors import HarnessError
from harness.fleet.pause_points import reached
from harness.fleet.trial_ending import reached_tracking, run_ends_with_the_trial
from harness.resolve.run_plan import PLAN_ARTIFACT
from harness.resolve.run_spec import ResolvedRun
from harness.study.train_evaluate_log import train_evaluate_log
from harness.tracking.metric_names import OBJECTIVE
from harness.tracking.tracker import CONFIG_TAG, Tracker, git_commit, package_versions

# which model the objective (the Optuna value) is the dev score of: always the one the trial tests
TESTED = {True: "the best dev checkpoint (keep_best), the model tested",
          False: "the last step's model (keep_best: false), the model tested"}  # fmt: skip


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


def trial_tags(run_spec: ResolvedRun, ctx: TrialContext, number: int, config: str = "base") -> dict[str, str]:
    """What a trial's MLflow run is tagged with when it starts; `config`: its configuration
    (harness.tracking.tracker.configuration), by which the UI's view groups seeds."""
    settings = run_spec.settings
    return {
        "method": settings.method,
        "study": ctx.study,
        "trial": str(number),
        CONFIG_TAG: config,
        "profile": ctx.profile,
        "git_commit": git_commit(),
        "mlflow.source.git.commit": git_commit(),
        "versions": package_versions(),
        "data_dir": str(ctx.data_dir),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "threads": str(ctx.threads or torch.get_num_threads()),
        **hardware_tags(pick_device(settings.device), settings.precision),
        **({"variant": run_spec.variant} if run_spec.variant else {}),
        "objective.of": TESTED[settings.keep_best],
        **paper_default_tags(run_spec),
        **ctx.study_tags,
    }


def run_trial(
    run_spec: ResolvedRun,
    ctx: TrialContext,
    number: int,
    report: Callable[[int, float], None] = lambda step, value: None,
    label: str = "",
    on_start: Callable[[str], None] = lambda run_id: None,
    still_ours: Callable[[], bool] = lambda: True,
    config: str = "base",
) -> float | tuple[float, ...]:
    """Train, evaluate and log one configuration in a child run of the study's parent; return its best
    dev score (the Optuna value: the dev score of the plan's target metric), or in a multi-objective study
    the values of its objectives (`ctx.objectives`), as logged. How the run ends when something stops the
    trial: harness.fleet.trial_ending."""
    name = f"{label} (trial {number})" if label else f"trial {number}"
    tags = trial_tags(run_spec, ctx, number, config)
    run = reached_tracking(lambda: ctx.tracker.start_child(ctx.experiment_id, ctx.parent_run_id, name, tags))
    with run_ends_with_the_trial(run, still_ours):
        reached("trial_run_created")
        on_start(run.run_id)
        reached("trial_started")
        run.log_params(run_spec.flat())
        run.log_text(yaml.safe_dump(run_spec.flat(), sort_keys=False), "config.yaml")
        run.log_text(run_spec.plan.to_json(), PLAN_ARTIFACT)
        final = train_evaluate_log(run_spec, ctx, run, report, number)
        value = objective_values(final, ctx.objectives) if ctx.objectives else final[OBJECTIVE]
        reached("trial_scored")
    reached("trial_finished")
    return value


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
