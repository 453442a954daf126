"""The `harness` command line. Every user-facing error is one line on stderr and a non-zero exit."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness.choices import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    POOLINGS,
    PRECISIONS,
    TEXT_VARIANTS,
    TRANSFER_FOLDS,
)
from harness.credentials import refused_by_mlflow
from harness.errors import HarnessError, ServiceUnavailable, mask_password, tracking_unreachable
from harness.program import as_invoked

if TYPE_CHECKING:  # heavy: imported by the commands that need them
    import optuna
    from optuna.storages import BaseStorage

    from harness.resolve.derived import Identity
    from harness.resolve.study_spec import ResolvedStudy

os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

STORAGE_HELP = (
    "Optuna storage: a journal file path (default: HARNESS_STORAGE, else optuna.journal in the nearest "
    ".harness/ here or above) or an RDB URL; a PostgreSQL password comes from PGPASSWORD or ~/.pgpass, not "
    "the URL (`ps` shows command lines to every user)"
)
TRACKING_HELP = (
    "MLflow tracking URI (default: MLFLOW_TRACKING_URI, else mlflow.db in the nearest .harness/ here or "
    "above); a server with authentication takes MLFLOW_TRACKING_USERNAME / MLFLOW_TRACKING_PASSWORD"
)
DATA_HELP = "data root (default: HARNESS_DATA_DIR, else ../shared/data)"
HEARTBEAT_HELP = (
    "RDB storages: seconds between a running trial's heartbeats; a trial silent for 3 heartbeats is "
    "re-run by another worker"
)
THREADS_HELP = (
    "torch CPU threads per worker (default HARNESS_THREADS, else cores / workers); scores are "
    "bit-identical for the same seed and thread count"
)
DEFAULT_HEARTBEAT = 60  # harness.fleet.recovery.DEFAULT_HEARTBEAT (not imported: keeps --help fast)


def _password_on_command_line(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A password typed inside --storage / --tracking-uri: one warning line (the value is used as given)."""
    from click.core import ParameterSource

    from harness.credentials import password_in, visible_password_warning

    if (
        value
        and password_in(value)
        and ctx.get_parameter_source(param.name or "") == ParameterSource.COMMANDLINE
    ):
        click.echo(visible_password_warning(param.opts[0]), err=True)
    return value


storage_option = click.option(
    "--storage", envvar="HARNESS_STORAGE", callback=_password_on_command_line, help=STORAGE_HELP
)
tracking_option = click.option("--tracking-uri", callback=_password_on_command_line, help=TRACKING_HELP)


EVAL_HELP = (
    "final tasks of every trial instead of the study's, e.g. STSBenchmark or quick (comma list of tasks and "
    "suites; see `harness tasks`); not with a paper profile"
)


SET_HELP = (
    "FIELD=VALUE: change a field of the study for this command (a run field: max_steps=10; a variant's: "
    "fusion.lr=1e-5; any YAML path: profiles.paper.base.lr=...; YAML values: seeds=[1,2]). The changed "
    "study runs as a derived study of its own, named by what differs; the same command resumes it. "
    "Repeatable"
)
SEARCH_HELP = (
    "FIELD=V1,V2: search these values of FIELD (or a range: 'lr={low: 1e-5, high: 1e-4}'); repeatable"
)


def worker_options(command: Callable[..., None]) -> Callable[..., None]:
    """--set, --search, --eval, --heartbeat and --threads, which run-study and worker share."""
    command = click.option("--eval", "eval_tasks", metavar="TASKS", help=EVAL_HELP)(command)
    command = click.option("--search", "searches", metavar="FIELD=V1,V2", multiple=True, help=SEARCH_HELP)(
        command
    )
    command = click.option("--set", "sets", metavar="FIELD=VALUE", multiple=True, help=SET_HELP)(command)
    command = click.option("--threads", type=click.IntRange(min=1), help=THREADS_HELP)(command)
    return click.option(
        "--heartbeat",
        default=DEFAULT_HEARTBEAT,
        show_default=True,
        type=click.IntRange(min=1),
        help=HEARTBEAT_HELP,
    )(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="harness", message="harness %(version)s")
def cli() -> None:
    """Run, track and report contrastive sentence-embedding experiments."""


@cli.command("run-study")
@click.argument("study")
@click.option(
    "--profile",
    help="profile from the study YAML (default: its default_profile, else smoke, else its only one; a study "
    "without profiles runs its base)",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="worker processes on this machine (one GPU each, or --trials-per-gpu K to a GPU); 0: only "
    "coordinate workers started elsewhere with `harness worker` (needs an RDB --storage)",
)
@click.option(
    "--trials-per-gpu",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="local workers sharing each GPU (small models leave a GPU idle with one trial); without --workers: "
    "this many on each visible GPU",
)
@click.option(
    "--gpu-sharing",
    type=click.Choice(["auto", "mps", "time-slicing"]),
    default="auto",
    show_default=True,
    help="how --trials-per-gpu K > 1 share a GPU: auto uses a running CUDA MPS daemon or starts one for the "
    "run (stopped at its end), else time-slices with a note; mps: an error where it cannot; time-slicing: "
    "never MPS",
)
@storage_option
@tracking_option
@click.option("--data-dir", help=DATA_HELP)
@click.option(
    "--fresh",
    is_flag=True,
    help="start over: delete the Optuna study and its earlier MLflow runs first (after a YAML edit: the "
    "study itself, instead of running a derived one)",
)
@click.option("--yes", "-y", is_flag=True, help="with --fresh: delete finished trials without asking")
@click.option("--retry-failed", is_flag=True, help="also re-run trials that failed with an error")
@click.option(
    "--dry-run", is_flag=True, help="print every trial's fields, steps and needs (hub, files); write nothing"
)
@worker_options
@click.option("--no-progress", is_flag=True, help="no progress bars (they show only on a terminal)")
@click.option("--report", "then_report", is_flag=True,
              help="then build the study's report and name its claims' verdicts")  # fmt: skip
def run_study_cmd(
    study: str,
    profile: str | None,
    workers: int,
    trials_per_gpu: int,
    gpu_sharing: str,
    storage: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
    fresh: bool,
    yes: bool,
    retry_failed: bool,
    dry_run: bool,
    sets: tuple[str, ...],
    searches: tuple[str, ...],
    eval_tasks: str | None,
    heartbeat: int,
    threads: int | None,
    no_progress: bool,
    then_report: bool,
) -> None:
    """Run STUDY (a name in studies/ or a YAML path); re-running the same command resumes it. A study
    whose configuration differs from the one it ran with here (an edited YAML, --set, --search, --eval)
    runs as a derived study named by what differs (--fresh instead replaces an edited study's runs)."""
    resolved = _load_for_run(study, profile, eval_tasks, sets, searches)
    if dry_run:
        from harness.data.paths import resolve_data_dir
        from harness.planning.dry_run import describe_plan

        identity, opened = _identity_if_stored(resolved, storage, fresh)
        if identity.reason:
            click.echo(identity.reason)
        from harness.study.optuna_study import finished_points

        seeded = "seed" in identity.study.grid()
        finished = finished_points(opened, identity.study.optuna_name, seeded) if opened is not None else []
        if fresh and finished:
            click.echo(f"--fresh would delete study {identity.study.optuna_name} here, with its "
                       f"{len(finished)} finished trial(s), and soft-delete their MLflow runs; all would "
                       "run again")  # fmt: skip
            finished = []
        for line in describe_plan(identity.study, resolve_data_dir(data_dir), finished):
            click.echo(line)
        return
    from harness.resolve.derived import identify
    from harness.study.preflight import (
        check_before_start,  # one line at once on bad input: before torch loads
    )

    workers = _workers_for(workers, trials_per_gpu, click.get_current_context())
    new_home = _home_to_make(storage, tracking_uri)
    checked = check_before_start(resolved, storage, tracking_uri, data_dir, workers, heartbeat)
    if new_home:
        click.echo(new_home)
    identity = identify(resolved, checked.storage, fresh)
    if identity.reason:
        click.echo(identity.reason)
    resolved = identity.study
    if fresh and not yes and sys.stdin.isatty():
        _confirm_fresh(resolved, checked.storage)
    _announce(resolved, profile)
    from harness.fleet.signals import sigterm_as_interrupt
    from harness.study.optuna_study import failed_trials, unfinished
    from harness.study.runner import run_study

    with sigterm_as_interrupt():
        opt = run_study(
            resolved,
            storage,
            tracking_uri,
            data_dir,
            workers,
            fresh,
            retry_failed,
            progress=not no_progress and sys.stderr.isatty(),
            heartbeat=heartbeat,
            threads=threads,
            checked=checked,
            per_gpu=trials_per_gpu,
            gpu_sharing=gpu_sharing,
        )
    command = resolved.command(target=study)
    _study_outcome(resolved, opt, tracking_uri, command, then_report)
    if then_report:
        _report_after(resolved, tracking_uri)
    failed, skipped = failed_trials(opt)
    for trial in skipped:
        click.echo(f"trial {trial.number} skipped: {trial.user_attrs['skipped']}", err=True)
    for trial in failed[:5]:
        reason = str(trial.user_attrs.get("error", "no reason recorded")).splitlines()[0]
        click.echo(f"trial {trial.number} ({_trial_label(trial.params)}) failed: {reason}", err=True)
    if len(failed) > 5:
        click.echo(
            f"... and {len(failed) - 5} more failed trial(s) (their MLflow runs hold the errors)", err=True
        )
    if failed or skipped:
        click.echo(
            f"{len(failed)} trial(s) failed, {len(skipped)} skipped; fix the cause, then re-run them with "
            f"`{command} --retry-failed`",
            err=True,
        )
    missing = unfinished(opt, resolved)
    if missing:
        click.echo(
            f"study incomplete: {missing} trial(s) not run (a worker was lost); re-run the same command to "
            "finish them",
            err=True,
        )
    if failed or missing:
        raise SystemExit(1)


def _workers_for(workers: int, per_gpu: int, ctx: click.Context) -> int:
    """--trials-per-gpu K without --workers: K workers on each visible GPU, said on the terminal."""
    from click.core import ParameterSource

    if per_gpu == 1 or ctx.get_parameter_source("workers") != ParameterSource.DEFAULT:
        if workers == 0 and per_gpu > 1:
            raise HarnessError("--trials-per-gpu places local workers; with --workers 0 there are none")
        return workers
    from harness.fleet.placement import default_workers
    from harness.study.workers import visible_gpus

    gpus = visible_gpus()
    chosen = default_workers(gpus, per_gpu)
    where = f"{len(gpus)} GPU(s)" if gpus else "no GPU: on the CPU"
    click.echo(f"--trials-per-gpu {per_gpu}: {chosen} local workers ({where}); --workers N to choose")
    return chosen


def _load_for_run(
    study: str, profile: str | None, eval_tasks: str | None, sets: tuple[str, ...], searches: tuple[str, ...]
) -> ResolvedStudy:
    """The study with its profile and the command line's --set, --search and --eval applied."""
    from harness.resolve.overrides import SEARCH, SET, eval_override, parse_override
    from harness.resolve.study_spec import load_study, refuse_eval_for_paper

    overrides = [parse_override(SET, s) for s in sets] + [parse_override(SEARCH, s) for s in searches]
    overrides += [eval_override(eval_tasks)] if eval_tasks else []
    resolved = load_study(study, profile, overrides)
    refuse_eval_for_paper(resolved)
    return resolved


def _home_to_make(storage: str | None, tracking_uri: str | None) -> str:
    """The line that says a new local store is made here, when the stores are the home's and no
    `.harness/` was found here or above (harness.home): '' otherwise."""
    from harness.home import FOLDER, find_home

    home, found = find_home()
    uses_home = not storage or not (tracking_uri or os.environ.get("MLFLOW_TRACKING_URI"))
    if found or not uses_home:
        return ""
    return f"store: no {FOLDER}/ here or above; making {home} (HARNESS_HOME names another place)"


def _confirm_fresh(study: ResolvedStudy, storage: BaseStorage) -> None:
    """On a terminal, `--fresh` over finished trials asks first (`--yes`: it does not)."""
    from harness.study.optuna_study import finished_points

    finished = len(finished_points(storage, study.optuna_name))
    if finished:
        asked = (f"--fresh deletes study {study.optuna_name} with its {finished} finished trial(s) and "
                 "soft-deletes their MLflow runs; go on?")  # fmt: skip
        if not click.confirm(asked):
            click.echo("nothing deleted: without --fresh the study resumes where it is", err=True)
            raise SystemExit(1)


def _identity_if_stored(
    resolved: ResolvedStudy, storage: str | None, fresh: bool
) -> tuple[Identity, BaseStorage | None]:
    """The study a dry run describes (the derived one where the storage already holds this study's name
    with another configuration) and the opened storage (None: nothing stored yet, or a database server).
    Reads an existing storage only (a dry run writes nothing)."""
    from harness.places import default_storage
    from harness.resolve.derived import Identity, identify

    spec = storage or default_storage()
    sqlite = spec.removeprefix("sqlite:///") if spec.startswith("sqlite:///") else None
    if "://" not in spec and not Path(spec).is_file() or sqlite is not None and not Path(sqlite).is_file():
        return identify(resolved, None, fresh), None  # nothing stored yet (and no file made to look)
    if "://" in spec and sqlite is None:  # a database server: opening may create its tables
        return Identity(resolved), None
    from harness.study.optuna_study import open_storage

    try:
        opened = open_storage(spec, create=False)
    except HarnessError:
        return Identity(resolved), None
    return identify(resolved, opened, fresh), opened


def _announce(resolved: ResolvedStudy, profile: str | None) -> None:
    """Say which profile runs when none was named and what it changes in the study, and what the
    methods' paper defaults change in fields the study leaves unset (both tagged on every trial)."""
    if profile is None:
        others = [p for p in resolved.profiles_available if p != resolved.profile]
        hint = f"; other profiles: {', '.join(others)} (--profile NAME)" if others else ""
        click.echo(f"profile {resolved.profile} (the default){hint}")
        if resolved.profile_changes:
            click.echo(f"  it sets: {resolved.profile_note()} (tagged profile.changes on each trial)")
    notes = {(r.paper_defaults_note(), r.method.run_defaults_source) for r in resolved.grid_runs()}
    for note, source in sorted(n for n in notes if n[0]):
        click.echo(
            f"paper defaults for fields the study leaves unset: {note} [{source}]; set them in the study "
            "to override (tagged paper_defaults on each trial)"
        )


def _report_after(resolved: ResolvedStudy, tracking_uri: str | None) -> None:
    """`run-study --report`: the study's report, and its claims' verdicts as the closing lines."""
    from harness.report.build import build_report

    try:
        folder, findings = build_report(resolved.name, tracking_uri, "reports/build", resolved.profile)
    except HarnessError as exc:
        click.echo(f"report not built: {exc}", err=True)
        return
    click.echo(f"report: {folder}")
    for line in findings.lines():
        click.echo(line)


def _study_outcome(
    resolved: ResolvedStudy, opt: optuna.Study, tracking_uri: str | None, command: str, reported: bool = False
) -> None:
    """The end of a study: trials done, the best configuration, where the report and the UI are, what
    next."""
    from harness.study.optuna_study import best_configuration, done_count, pareto_front
    from harness.tracking.tracker import experiment_url, resolve_tracking_uri

    best, name = best_configuration(opt), resolved.name
    click.echo(f"study {resolved.optuna_name}: {done_count(opt)} of {resolved.n_trials} trial(s) complete")
    if best is not None:
        run = resolved.resolve(best.params)
        metric = run.plan.scoring.target
        label = _trial_label(best.params)
        if "seed" in resolved.search:
            seeds = ", ".join(str(s) for s in best.seeds)
            trials = ", ".join(str(t) for t in best.trials)
            n = len(best.values)
            spread = (
                f"mean {best.mean:.4g} +- {best.std:.2g} std, n={n}" if n > 1 else f"{best.mean:.4g}, n=1"
            )
            click.echo(f"best: {label} (seeds {seeds}: trials {trials}), dev {metric} {spread} (the "
                       "objective, averaged over seeds)")  # fmt: skip
        else:
            click.echo(
                f"best: trial {best.trials[0]} ({label}), dev {metric} {best.mean:.4g} (the objective)"
            )
    if resolved.multi_objective():
        front = pareto_front(opt)
        wanted = ", ".join(f"{o.metric} ({o.direction})" for o in resolved.objectives)
        click.echo(f"Pareto front of {wanted}: {len(front)} trial(s) no other trial beats on every objective")
        for trial in front:
            values = ", ".join(
                f"{o.metric} {v:.4g}" for o, v in zip(resolved.objectives, trial.values, strict=True)
            )
            click.echo(f"  trial {trial.number} ({_trial_label(trial.params)}): {values}")
    uri = resolve_tracking_uri(tracking_uri)
    url = experiment_url(uri, str(opt.user_attrs.get("mlflow_experiment_id", "")))
    shown = mask_password(url)
    click.echo(as_invoked(f"browse: {'' if uri.startswith('http') else '`harness ui`, then '}{shown}"))
    if not reported:
        click.echo(
            as_invoked(f"next: `harness report {name}` writes reports/build/{name}/ (tables, figures, PDF)")
        )
    if done_count(opt) < resolved.n_trials:
        click.echo(as_invoked(f"resume or finish later with the same command: `{command}`"))


def _trial_label(params: dict[str, object]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items()) or "no searched params"


@cli.command("worker")
@click.argument("study")
@click.option("--profile")
@storage_option
@tracking_option
@click.option("--data-dir", help=DATA_HELP)
@click.option("--position", default=0, hidden=True, type=int)
@click.option("--study-name", "pinned", hidden=True, help="the coordinator's (derived) study")
@click.option(
    "--wait",
    default=0.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="seconds to wait for `harness run-study` to create the study (workers started beside it)",
)
@worker_options
@click.option("--no-progress", is_flag=True)
def worker_cmd(
    study: str,
    profile: str | None,
    storage: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
    position: int,
    pinned: str | None,
    wait: float,
    sets: tuple[str, ...],
    searches: tuple[str, ...],
    eval_tasks: str | None,
    heartbeat: int,
    threads: int | None,
    no_progress: bool,
) -> None:
    """Join a running study as one more worker (same machine or another one sharing the storage); give it
    the same STUDY, --profile, --set, --search and --eval as `harness run-study`."""
    resolved = _load_for_run(study, profile, eval_tasks, sets, searches)
    if not wait:  # one line at once on a bad place; with --wait the runner waits for them to appear
        from harness.study.preflight import check_worker_places

        check_worker_places(storage, tracking_uri, data_dir)
    from harness.fleet.signals import sigterm_as_interrupt
    from harness.study.runner import run_worker

    with sigterm_as_interrupt():
        run_worker(
            resolved.model_copy(update={"name": pinned}) if pinned else resolved,
            storage,
            tracking_uri,
            data_dir,
            not no_progress and sys.stderr.isatty(),
            position,
            heartbeat,
            threads,
            wait,
            pinned=pinned is not None,
        )


@cli.command("eval")
@click.option("--model", required=True, help="hub id, local directory, or all-MiniLM-L6-v2")
@click.option(
    "--pooler",
    type=click.Choice(POOLINGS),
    help="default: a saved trial model's own (its harness.json), else model: the model's "
    "sentence-transformers pipeline (e.g. all-MiniLM-L6-v2: mean, then Normalize; mean without modules); "
    "mean keeps the raw pooler; unsupervised SimCSE models: cls_before_pooler",
)
@click.option("--tasks", help="comma-separated tasks, e.g. STS12,STSBenchmark,MR,MRPC,AlignUniform")
@click.option("--suite", help="task set: sts (default), transfer, full (see `harness tasks`)")
@click.option("--text", default="senteval", show_default=True, type=click.Choice(TEXT_VARIANTS))
@click.option("--preset", default="prototyping", show_default=True, type=click.Choice(list(TRANSFER_FOLDS)))
@click.option(
    "--classifier",
    default="sklearn",
    show_default=True,
    type=click.Choice(["sklearn", "pytorch", "pytorch_adam"]),
    help="transfer tasks: scikit-learn's logistic regression, or SentEval's PyTorch one with its "
    "prototyping (Liao's) or default (adam) settings",
)
@click.option(
    "--json",
    "json_path",
    help="write the results as JSON to this file, and each scored item's prediction beside it "
    "(r.json: r.items.parquet)",
)
@click.option(
    "--mteb-results",
    "mteb_dir",
    help="also score the MTEB tasks among the tasks (STS12-16, STSBenchmark) on MTEB's text and write "
    "them in MTEB's results layout under this folder (DIR/results/<model>/<revision>/<Task>.json)",
)
@click.option(
    "--mteb-model-name", help="the model's name in the MTEB results (default: its hub id or folder name)"
)
@click.option("--mlflow", "to_mlflow", is_flag=True, help="log the results into an MLflow run")
@click.option("--experiment", default="eval", show_default=True, help="MLflow experiment for --mlflow")
@tracking_option
@click.option("--data-dir", help=DATA_HELP)
@click.option("--precision", default="auto", show_default=True, type=click.Choice(PRECISIONS))
@click.option("--device", default="auto", show_default=True)
@click.option("--batch-size", default=128, show_default=True, type=click.IntRange(min=1))
@click.option("--max-seq-length", type=click.IntRange(min=1), help="default: the model's own (512 at most)")
@click.option("--no-cache", is_flag=True, help="do not read or write the embedding cache")
@click.option(
    "--limit",
    type=click.IntRange(min=10),
    help="a quick look: score each task on a fixed random sample of at most N items per subset or split "
    "(seed 0); not comparable with full-set or published scores",
)
@click.option("--no-progress", is_flag=True)
def eval_cmd(
    model: str,
    pooler: str | None,
    tasks: str | None,
    suite: str | None,
    text: str,
    preset: str,
    classifier: str,
    json_path: str | None,
    mteb_dir: str | None,
    mteb_model_name: str | None,
    to_mlflow: bool,
    experiment: str,
    tracking_uri: str | None,
    data_dir: str | None,
    precision: str,
    device: str,
    batch_size: int,
    max_seq_length: int | None,
    no_cache: bool,
    limit: int | None,
    no_progress: bool,
) -> None:
    """Evaluate a model on STS (Spearman x 100), SentEval transfer tasks (accuracy) and geometry."""
    from harness.encoders.location import check_available

    check_available(model)  # one line at once, before torch's imports, for a model that is not reachable
    from harness.commands.eval_run import format_table, items_path, log_eval, run_eval, write_json
    from harness.device import describe
    from harness.encoders.save import saved_settings
    from harness.evaluate.registry import collected
    from harness.evaluate.suite import resolve_tasks
    from harness.fleet.pause_points import reached

    saved = saved_settings(model)  # a trial's saved model/: its own pooling and max length
    pooler = pooler or str(saved.get("pooling", "model"))
    max_seq_length = max_seq_length or saved.get("max_seq_length")  # type: ignore[assignment]
    names = resolve_tasks(tasks, suite)
    records: list = []  # each task's per-item record (harness.evaluate.registry)
    mteb: dict | None = None  # the MTEB tasks' scores (harness.evaluate.mteb_results)
    if mteb_dir and limit is not None:
        raise HarnessError("--mteb-results writes full-set scores; drop --limit to write MTEB results")
    if mteb_dir:
        from harness.evaluate.mteb_results import mteb_tasks

        mteb_tasks(names)  # one line before any encoding when no task has an MTEB counterpart
        mteb = {}
    results, settings = run_eval(
        model,
        names,
        pooler,
        text,
        preset,
        data_dir,
        precision,
        device,
        batch_size,
        max_seq_length,
        not no_cache,
        not no_progress,
        classifier,
        records,
        mteb,
        limit,
    )
    record = collected(records)
    click.echo(format_table(results))
    if limit is not None:
        from harness.evaluate.limit import LIMIT_NOTE

        click.echo(f"(--limit {limit}: at most {limit} items per subset or split; {LIMIT_NOTE})")
    click.echo(f"({settings['seconds']} s, {describe(settings['hardware'])})")  # type: ignore[arg-type]
    reached("eval_scored")
    parts = settings["seconds_by_part"]
    assert isinstance(parts, dict)
    click.echo("time: " + ", ".join(f"{part} {value:.1f} s" for part, value in parts.items()))
    if json_path:
        write_json(results, settings, json_path, record)
        beside = f" (per-item predictions: {items_path(json_path)})" if record is not None else ""
        click.echo(f"results written to {json_path}{beside}")
    if mteb_dir and mteb is not None:
        from harness.evaluate.mteb_results import mteb_model_name as named
        from harness.evaluate.mteb_results import write_mteb_results

        folder = write_mteb_results(Path(mteb_dir), mteb_model_name or named(model), mteb)
        shown = ", ".join(f"{task} {100 * entry['main_score']:.2f}" for task, entry in mteb.items())
        click.echo(f"MTEB results (cosine Spearman x 100: {shown}) written to {folder}")
    if to_mlflow:
        run_id = log_eval(results, settings, experiment, tracking_uri, record)
        click.echo(f"logged to MLflow run {run_id} in experiment {experiment!r}")


@cli.command("tasks")
def tasks_cmd() -> None:
    """List the evaluation tasks, the suites and the aggregates (harness/evaluate/tasks/)."""
    from harness.evaluate.registry import aggregates, suites, tasks

    click.echo(f"{'task':20s} {'kind':15s} {'main score':11s} {'splits':17s} aggregates")
    for task in tasks().values():
        click.echo(f"{task.name:20s} {task.kind:15s} {task.main_score:11s} {','.join(task.splits):17s} "
                   f"{','.join(task.aggregates) or '-'}")  # fmt: skip
    click.echo("")
    for name, members in suites().items():
        click.echo(f"suite {name}: {', '.join(members)}")
    for aggregate in aggregates().values():
        click.echo(f"aggregate {aggregate.name}: mean {aggregate.score} of {', '.join(aggregate.members)}")


@cli.command("report")
@click.argument("studies", nargs=-1, metavar="[STUDY]...")
@click.option("--all", "book", is_flag=True, help="every study in one reproduction book (reports/build/book)")
@tracking_option
@click.option("--out", default="reports/build", show_default=True, help="output root")
@click.option("--profile", help="which profile's runs (default: the latest study run)")
@click.option("--no-pdf", is_flag=True, help="skip pdflatex")
@click.option("--resamples", default=BOOTSTRAP_RESAMPLES, show_default=True, type=click.IntRange(min=100),
              help="bootstrap resamples B of each interval (docs/statistics.md)")  # fmt: skip
@click.option("--bootstrap-seed", default=BOOTSTRAP_SEED, show_default=True, type=click.IntRange(min=0),
              help="the bootstrap's seed: the same seed, the same intervals")  # fmt: skip
@click.option("--no-statistics", is_flag=True, help="the numbers alone: no intervals, no claims' verdicts")
@click.option(
    "--baseline",
    metavar="ROW",
    help="compare every other row with this one, as printed (e.g. 'lambda = 0.1'): its paired difference "
    "with a 95%% interval under each row, a dagger where it holds",
)
@click.option("--data-dir", help=DATA_HELP + "; read only by parts that print examples (errors, projection)")
def report_cmd(
    studies: tuple[str, ...],
    book: bool,
    tracking_uri: str | None,
    out: str,
    profile: str | None,
    no_pdf: bool,
    resamples: int,
    bootstrap_seed: int,
    no_statistics: bool,
    baseline: str | None,
    data_dir: str | None,
) -> None:
    """Rebuild STUDY's LaTeX tables, figures and PDF from MLflow, or with --all the reproduction book;
    every cell with its 95% interval, every paper claim with its verdict (docs/statistics.md). Several
    STUDYs (an origin and its derived studies): their runs in one table, labelled by what differs."""
    from harness.report.book import build_book
    from harness.report.build import build_report
    from harness.stats.resample import Resampler

    if book == bool(studies):
        raise HarnessError(
            "name a STUDY (or several) or give --all (the book of every study), not both or neither"
        )
    study = studies[0] if studies else None
    resampler = Resampler(resamples, bootstrap_seed)
    if book:
        built = build_book(
            tracking_uri, out, profile, not no_pdf, resampler, statistics=not no_statistics, data_dir=data_dir
        )
        total = len(built.built) + len(built.not_run)
        pdf_path = built.folder / "book.pdf"
        written = pdf_path if pdf_path.exists() else built.folder / "book.tex"
        names = ", ".join(built.built) or "none"
        click.echo(f"book written to {written}: {len(built.built)} of {total} studies built ({names})")
        if built.not_run:
            click.echo(
                f"{len(built.not_run)} studies have no runs yet (listed on the book's first page); run:"
            )
            for command in built.not_run.values():
                click.echo(as_invoked(f"  `{command}`"))
        if built.others:
            click.echo(f"{len(built.others)} other studies in this store, each with its own report:")
            for name, what in sorted(built.others.items()):
                click.echo(as_invoked(f"  `harness report {name}`   ({what})"))
        return
    assert study is not None  # checked above: --all or a STUDY
    for name in studies:
        _plain("study name", name)
    if len(set(studies)) < len(studies):
        raise HarnessError(f"a study is named twice in {' '.join(studies)}; name each once")
    folder, findings = build_report(
        study,
        tracking_uri,
        out,
        profile,
        not no_pdf,
        resampler,
        statistics=not no_statistics,
        data_dir=data_dir,
        baseline=baseline,
        also=studies[1:],
    )
    click.echo(f"report written to {folder}")
    for path in sorted(folder.iterdir()):
        click.echo(f"  {path.name}")
    for line in findings.lines():
        click.echo(line)
    if len(studies) == 1:
        _derived_hint(study, tracking_uri)


def _derived_hint(study: str, tracking_uri: str | None) -> None:
    """After a study's report: the studies derived from it in this store, with the command for each."""
    from harness.resolve.derived import derived_studies
    from harness.tracking.tracker import Tracker, require_store

    derived = derived_studies(Tracker(require_store(tracking_uri)), study)
    if derived:
        click.echo(f"studies derived from {study} here (each its own report):")
    for name, changes in derived:
        click.echo(as_invoked(f"  {name} ({changes}): `harness report {name}`"))
    if derived:
        together = " ".join([study, *(name for name, _ in derived)])
        click.echo(as_invoked(f"all in one table: `harness report {together}`"))


@cli.command("export")
@click.argument("study")
@click.option("--out", required=True, help="a new or empty directory for the model(s)")
@click.option("--top", default=1, show_default=True, type=click.IntRange(min=1), help="the k best trials")
@click.option("--profile", help="which profile's runs (default: the latest study run)")
@tracking_option
def export_cmd(study: str, out: str, top: int, profile: str | None, tracking_uri: str | None) -> None:
    """Write the best trial's saved model (the study needs save_model: true) where
    SentenceTransformer(path) loads it; --top k: the k best, one folder each."""
    from harness.commands.export import export_best
    from harness.tracking.tracker import Tracker

    _plain("study name", study)
    for path in export_best(Tracker(tracking_uri), study, Path(out), profile, top):
        if (path / "modules.json").is_file():
            click.echo(f"exported {path}")
        else:  # e.g. Liao's mean_no_cls: no sentence-transformers Pooling module computes it
            click.echo(f"exported {path} (Hugging Face files only: its pooling has no sentence-transformers "
                       f"module; `harness eval --model {path}` embeds it as the trial did)")  # fmt: skip


@cli.command("ui")
@tracking_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=5000, show_default=True, type=int)
def ui_cmd(tracking_uri: str | None, host: str, port: int) -> None:
    """Start the MLflow UI on the harness's tracking store."""
    from harness.places import check_port_free
    from harness.tracking.tracker import TRAINING_VIEW, default_artifact_root, require_store

    uri = require_store(tracking_uri)  # not a new empty store wherever `ui` is run
    if not (uri.startswith("sqlite:") or uri.startswith("postgresql") or uri.startswith("mysql")):
        raise HarnessError(f"{uri} is already a server; open it in a browser instead")
    check_port_free(host, port, "the MLflow UI")
    click.echo(f"MLflow UI for {uri}: http://{host}:{port}/#/experiments?{TRAINING_VIEW}  (Ctrl-C to stop)")
    cmd = [
        sys.executable,
        "-m",
        "mlflow",
        "ui",
        "--backend-store-uri",
        uri,
        "--host",
        host,
        "--port",
        str(port),
        "--default-artifact-root",
        default_artifact_root().as_uri(),
    ]
    # no MLflow job consumers (8 processes, each importing MLflow): the harness runs no MLflow jobs
    os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
    os.execv(sys.executable, cmd)


@cli.command("dashboard")
@storage_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
def dashboard_cmd(storage: str | None, host: str, port: int) -> None:
    """Start optuna-dashboard on the harness's Optuna storage (studies, trials, parameter plots); with
    HARNESS_DASHBOARD_PASSWORD set (needed off 127.0.0.1) every request needs that account (HTTP basic
    authentication; user HARNESS_DASHBOARD_USERNAME, default admin)."""
    from harness.commands.dashboard import account, dashboard_app, serve
    from harness.study.optuna_study import default_storage, open_storage

    credentials = account(host)  # before anything is opened: a missing password is the first error
    try:
        import optuna_dashboard  # noqa: F401
    except ImportError:
        raise HarnessError(
            "optuna-dashboard is not installed; run `make setup` (or pip install optuna-dashboard)"
        ) from None
    from harness.places import check_port_free

    spec = storage or default_storage()
    opened = open_storage(spec, create=False)
    check_port_free(host, port, "optuna-dashboard")
    guard = f"user {credentials[0]} and its password; " if credentials else ""
    click.echo(f"optuna-dashboard for {mask_password(spec)}: http://{host}:{port}  ({guard}Ctrl-C to stop)")
    serve(dashboard_app(opened, credentials), host, port)


@cli.command("methods")
@click.option("--method", "only", metavar="NAME", help="one method only")
@click.option("--run-fields", is_flag=True, help="the run fields every method shares (model, lr, ...)")
def methods_cmd(only: str | None, run_fields: bool) -> None:
    """The registered methods with their fields (one a line), then the stage kinds and objectives."""
    from harness.commands.listings import method_lines, run_field_lines

    for line in run_field_lines() if run_fields else method_lines(only):
        click.echo(line)


@cli.command("plan")
@click.argument("study", required=False)
@click.option("--profile", help="the profile to plan (default: the study's default, as run-study)")
@click.option("--all", "every", is_flag=True, help="every study in studies/ and the book's total")
@click.option(
    "--device",
    default="auto",
    show_default=True,
    help="where to calibrate and estimate: auto, cpu, cuda, cuda:1",
)
@click.option(
    "--steps", default=2, show_default=True, type=click.IntRange(min=1), help="timed steps per distinct stage"
)
@click.option("--data-dir", help=DATA_HELP)
@click.option("--seeds", type=click.IntRange(min=1),
              help="K: what K seeds per row cost, and the smallest difference each claim could detect with "
                   "them (80% power), from the study's finished runs")  # fmt: skip
@click.option(
    "--recalibrate",
    is_flag=True,
    help="measure every timing again (a plan reads back this machine's earlier calibrations)",
)
@tracking_option
def plan_cmd(
    study: str | None,
    profile: str | None,
    every: bool,
    device: str,
    steps: int,
    data_dir: str | None,
    seeds: int | None,
    tracking_uri: str | None,
    recalibrate: bool,
) -> None:
    """What STUDY costs before it runs: per trial the steps, dev evaluations, texts encoded and an estimated
    time from a short calibration on DEVICE (GPU-hours on a GPU). Offline; writes nothing to the stores.
    With --seeds K, also how small a difference each of its claims could detect with K seeds."""
    from harness.resolve.study_spec import STUDIES_DIR, load_study

    if every == bool(study):
        raise click.UsageError("give a STUDY or --all")
    if every:  # each study at --profile where it has one (its default profile without --profile)
        names = [p.stem for p in sorted(STUDIES_DIR.glob("*.yaml"))]
        with_it = [n for n in names if profile in (None, *load_study(n).profiles_available)]
        studies = [load_study(name, profile) for name in with_it]
    else:
        assert study is not None  # checked above: --all or a STUDY
        studies = [load_study(study, profile)]
    from harness.data.paths import resolve_data_dir
    from harness.device import pick_device
    from harness.planning.calibration_cache import CalibrationCache
    from harness.planning.cost import Calibrator
    from harness.planning.cost_lines import plan_lines

    chosen = pick_device(device)
    calibrator = Calibrator(chosen, steps, CalibrationCache(chosen, steps, fresh=recalibrate))
    if seeds is not None:
        if every:
            raise click.UsageError("--seeds sizes one study: give a STUDY, not --all")
        _seed_plan(studies[0], seeds, resolve_data_dir(data_dir), calibrator, tracking_uri)
        return
    for line in plan_lines(studies, resolve_data_dir(data_dir), calibrator):
        click.echo(line)


def _seed_plan(
    study: ResolvedStudy, seeds: int, data_dir: Path, calibrator: object, tracking_uri: str | None
) -> None:
    """`plan STUDY --seeds K`: the plan, K seeds' cost, and each claim's detectable difference with K."""
    from harness.planning.cost_lines import duration, gpu_hours, study_plan
    from harness.report.evidence import Evidence
    from harness.report.power import power_lines
    from harness.tracking.tracker import Tracker, require_store

    lines, total = study_plan(study, data_dir, calibrator)  # type: ignore[arg-type]
    for line in lines:
        click.echo(line)
    planned = len(study.grid().get("seed", [None]))  # the seeds the profile runs now
    cost = f"~{duration(total / planned * seeds)}{gpu_hours(total / planned * seeds, calibrator)}"  # type: ignore[arg-type]
    tracker = Tracker(require_store(tracking_uri))
    for line in power_lines(study.name, study.profile, tracker, seeds, Evidence(tracker), cost):
        click.echo(line)


@cli.command("studies")
@tracking_option
def studies_cmd(tracking_uri: str | None) -> None:
    """The studies in studies/: profiles and their trial counts, finished trials here, descriptions."""
    from harness.commands.listings import study_lines
    from harness.resolve.study_spec import STUDIES_DIR

    for line in study_lines(sorted(STUDIES_DIR.glob("*.yaml")), tracking_uri):
        click.echo(line)


@cli.command("paper")
@click.argument("name", required=False)
@click.option("--profile", help="every study's profile (default: each study's default, smoke)")
@click.option("--dry-run", is_flag=True, help="per study: trials, steps and the claims the profile can judge")
@click.option(
    "--plan", "plan", is_flag=True, help="per study: the estimated time on this machine (harness plan)"
)
@click.option(
    "--run", "run", is_flag=True, help="run the studies in order (resumable), then the paper's book"
)
@tracking_option
@storage_option
@click.option("--data-dir", help=DATA_HELP)
def paper_cmd(
    name: str | None,
    profile: str | None,
    dry_run: bool,
    plan: bool,
    run: bool,
    tracking_uri: str | None,
    storage: str | None,
    data_dir: str | None,
) -> None:
    """A paper in one command: its studies in the order they can run. Without NAME: the papers and what
    has run here; with NAME: --dry-run, --plan or --run (default --dry-run)."""
    from harness.commands.paper import dry_run_lines, find_paper, listing
    from harness.data.paths import resolve_data_dir

    if name is None:
        from harness.tracking.store_index import finished_trials, local_store

        store = local_store(tracking_uri)
        done = {study: ", ".join(f"{p} {n}" for p, n in counts.items())
                for study, counts in (finished_trials(store) if store else {}).items()}  # fmt: skip
        for line in listing(done):
            click.echo(line)
        return
    paper = find_paper(name)
    root = resolve_data_dir(data_dir)
    if plan:
        _plan_studies(list(paper.studies), profile, root)
    elif run:
        _run_paper(paper.studies, profile, storage, tracking_uri, data_dir)
    else:
        for line in dry_run_lines(paper, profile, root):
            click.echo(line)


def _plan_studies(studies: list[str], profile: str | None, data_dir: Path) -> None:
    """`harness plan` of several studies, calibrated on this machine's default device."""
    from harness.device import pick_device
    from harness.planning.calibration_cache import CalibrationCache
    from harness.planning.cost import Calibrator
    from harness.planning.cost_lines import plan_lines
    from harness.resolve.study_spec import load_study

    resolved = [load_study(study, profile) for study in studies]
    device = pick_device("auto")
    for line in plan_lines(resolved, data_dir, Calibrator(device, 2, CalibrationCache(device, 2))):
        click.echo(line)


def _run_paper(
    studies: tuple[str, ...],
    profile: str | None,
    storage: str | None,
    tracking_uri: str | None,
    data_dir: str | None,
) -> None:
    """Each study as `run-study` runs it (preflight, derived or grown, resumed), then the paper's book."""
    ctx = click.get_current_context()
    for study in studies:
        click.echo(f"== {study}")
        ctx.invoke(run_study_cmd, study=study, profile=profile, storage=storage, tracking_uri=tracking_uri,
                   data_dir=data_dir)  # fmt: skip
    from harness.report.book import build_book

    key = ctx.params["name"].lower()
    book = build_book(tracking_uri, "reports/build", profile, data_dir=data_dir, only=list(studies),
                      name=f"paper-{key}")  # fmt: skip
    pdf = ", book.pdf" if (book.folder / "book.pdf").is_file() else ""
    click.echo(f"the paper's book: {book.folder} (book.tex{pdf})")


@cli.command("new")
@click.argument("name")
@click.option("--method", required=True, help="a registered method (see `harness methods`)")
@click.option(
    "--out", help="where to write it (default: studies/NAME.yaml, so `harness run-study NAME` runs it)"
)
def new_cmd(name: str, method: str, out: str | None) -> None:
    """Write a commented study YAML for METHOD that runs offline in minutes: the start of an own study."""
    from harness.commands.new_study import write_study

    path, spec = write_study(name, method, out)
    click.echo(
        as_invoked(
            f"wrote {path}; see its trials with `harness run-study {name if not out else path} --dry-run`"
        )
    )
    said = (f"wrote {spec}: its report's table, compared with the first configuration; add claims there "
            f"(an example is in its comments), then `harness report {name}`")  # fmt: skip
    click.echo(as_invoked(said))


from harness.commands.stage_cache_commands import cache_group  # noqa: E402  (its own file: the stage cache's commands)

cli.add_command(cache_group)


def _plain(kind: str, name: str) -> None:
    """A name given on the command line that becomes a folder: one line when it is not a plain name."""
    from harness.resolve.study_spec import check_plain_name

    try:
        check_plain_name(kind, name)
    except ValueError as exc:
        raise HarnessError(str(exc)) from None


def skip_the_final_collection() -> None:
    """At exit, Python's finalisation runs a full garbage collection over every object the imports made
    (~500k: torch, transformers, MLflow): 1.1 s of the 1.3 s a worker-like process spent after its work
    had ended, on a 2-core AMD EPYC (bench/exit_cost.py: 1.34 s -> 0.22 s; `os._exit`: 0.07 s).
    `gc.freeze()` as the last exit handler moves them out of the collector's reach; objects are still
    freed by reference counting, and every other exit handler (logging's flush, MLflow's) has already run
    (atexit runs its handlers last registered first)."""
    import atexit
    import gc

    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)  # registered first, so it runs last


def check_override_form(argv: list[str]) -> None:
    """`--set max_steps 10` (a space for the `=`): click would take `10` for an extra argument; say the
    form instead."""
    for index, option in enumerate(argv[:-1]):
        given, after = argv[index + 1], argv[index + 2] if index + 2 < len(argv) else ""
        if option in ("--set", "--search") and "=" not in given:
            value = f"={after}" if after and not after.startswith("-") else "=VALUE"
            raise HarnessError(
                f"{option} {given}: write {option} FIELD=VALUE, one word (e.g. {option} {given}{value})"
            )


def main() -> None:
    skip_the_final_collection()
    # MLflow's download bars: lines of noise in a log, and on a terminal a blank line for each artifact a
    # report reads (one a run); the harness's own bars say what is slow
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    try:
        check_override_form(sys.argv[1:])
        cli.main(standalone_mode=False)
    except HarnessError as exc:  # URLs in messages are masked where made; masked again: the line is public
        click.echo(f"error: {mask_password(as_invoked(str(exc)))}", err=True)
        sys.exit(2)
    except ServiceUnavailable as exc:  # a database or tracking-server outage outlived the retries
        click.echo(f"error: {mask_password(str(exc))}", err=True)
        sys.exit(1)
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:
        from harness.fleet.signals import INTERRUPTED_EXIT, TERMINATED_EXIT, Terminated

        terminated = Terminated in (type(exc), type(exc.__cause__))  # click turns it into Abort
        resumes = sys.argv[1:2] in (["run-study"], ["worker"])  # the other commands start again
        click.echo(f"{'terminated (SIGTERM)' if terminated else 'interrupted'}"
                   f"{': re-run the same command to resume' if resumes else ''}", err=True)  # fmt: skip
        sys.exit(TERMINATED_EXIT if terminated else INTERRUPTED_EXIT)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        refusal = refused_by_mlflow(exc)
        if refusal is not None:  # a server with authentication refused the credentials or the account
            click.echo(f"error: {refusal}", err=True)
            sys.exit(2)
        unreachable = tracking_unreachable(exc)  # MLflow gave up on its server outside a trial
        if unreachable is None:
            raise
        shown = mask_password(unreachable)
        click.echo(f"error: MLflow tracking server unreachable ({shown}); re-run the same command once it is "
                   "back", err=True)  # fmt: skip
        sys.exit(1)
