"""End to end: a real Optuna study of real trials, logged to a real MLflow store, then reported."""

from __future__ import annotations

import math
import signal
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
from scipy.stats import spearmanr

from harness.evaluate.tasks.sts import STS_TASKS
from harness.fleet.recovery import MLFLOW_RUN
from harness.report.build import build_report
from harness.resolve.study_spec import load_study
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, read_items
from harness.study.optuna_study import open_storage
from harness.study.runner import run_study
from harness.tracking.metric_names import history, metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, tiny_study
from tests.launcher import Launched, launch
from tests.report.drawn import capture_figures

STS_METRICS = [
    "STS12.spearman",
    "STS13.spearman",
    "STS14.spearman",
    "STS15.spearman",
    "STS16.spearman",
    "STSBenchmark.spearman",
    "SICKRelatedness.spearman",
]


@pytest.mark.slow
def test_two_trial_study_is_tracked_and_reported(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = load_study(
        tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.9], "tau": [0.5]}, final_tasks=None)
    )
    opt = run_study(study, progress=False)
    assert [t.state.name for t in opt.trials] == ["COMPLETE", "COMPLETE"]

    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name("lambda_tau_sweep")
    parents = tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert metrics_of(parents[0])["trials.complete"] == 2
    children = child_runs("lambda_tau_sweep")
    assert len(children) == 2
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert sorted(float(c.data.params["lambda"]) for c in children) == [0.1, 0.9]
    for child in children:
        assert child.info.status == "FINISHED"
        tags, params, metrics = child.data.tags, child.data.params, metrics_of(child)
        assert tags["method"] == "scl" and tags["profile"] == "tiny" and tags["study"] == "lambda_tau_sweep"
        assert tags["data_dir"] and tags["git_commit"] and tags["trial"] in {"0", "1"}
        assert tags["precision"] == "fp32" and tags["cpu.model"] and tags["cpu.capability"]
        assert params["tau"] == "0.5" and params["selection"] == "allpalln" and params["batch_size"] == "16"
        scores = [metrics[m] for m in STS_METRICS]
        assert all(-100 <= s <= 100 for s in scores)
        assert metrics["STS.avg"] == pytest.approx(sum(scores) / len(scores))
        dev = history(tracker.client, child.info.run_id, "dev.STSBenchmark.spearman")
        assert [m.step for m in dev] == [2, 4]
        assert len(history(tracker.client, child.info.run_id, "train.loss")) == 4
        trial = opt.trials[int(tags["trial"])]
        assert trial.value == pytest.approx(max(m.value for m in dev))
        artifacts = {a.path for a in tracker.client.list_artifacts(child.info.run_id)}
        assert {"config.yaml", "results.json", ARTIFACT} <= artifacts
        _check_items(tracker, child, metrics, tmp_path / child.info.run_id)

    drawn = capture_figures(monkeypatch)
    folder, _ = build_report("lambda_tau_sweep", None, str(tmp_path / "build"), None, pdf=False)
    grid = (folder / "grid_sts_avg.tex").read_text()
    table = (folder / "sts_results.tex").read_text()
    assert "\\toprule" in grid and "\\bottomrule" in table
    liao = [f"STS1{y}.spearman_wmean" for y in range(2, 7)]  # Liao Table 2: wmean per year, their average
    for child in children:
        metrics = metrics_of(child)
        assert metrics["STS12-16.wmean"] == pytest.approx(sum(metrics[m] for m in liao) / 5)
        assert f"{metrics['STS12-16.wmean']:.2f}" in grid
        for metric in [*liao, "STSBenchmark.spearman", "SICKRelatedness.spearman"]:
            assert f"{metrics[metric]:.2f}" in table
    best = max(metrics_of(c)["STS12-16.wmean"] for c in children)
    # the best cell bold, or marked "=" where it does not beat the runner-up beyond their paired interval
    assert f"\\textbf{{{best:.2f}}}" in grid or f"{best:.2f}$^{{=}}$" in grid
    assert (folder / "heatmap_sts_avg.png").stat().st_size > 1000
    # the heatmap draws each trial's STS12-16.wmean in its cell: lambda down (0.1, 0.9), tau across (0.5)
    ax = drawn["heatmap_sts_avg.png"].axes[0]
    by_lambda = {float(c.data.params["lambda"]): metrics_of(c)["STS12-16.wmean"] for c in children}
    np.testing.assert_allclose(ax.images[0].get_array(), [[by_lambda[0.1]], [by_lambda[0.9]]], rtol=1e-12)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0.1", "0.9"] and ax.get_ylabel() == "λ"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.5"] and ax.get_xlabel() == "τ"
    (outline,) = ax.patches  # the better trial's cell
    assert outline.get_xy() == (-0.5, (0 if by_lambda[0.1] > by_lambda[0.9] else 1) - 0.5)
    assert not list((tmp_path / "build").glob(".*"))  # no staging leftovers


def _check_items(tracker: Tracker, child: object, metrics: dict[str, float], scratch: Path) -> None:
    """The trial's per-item record, read back from MLflow alone: the seven STS test sets; scipy's Spearman
    of STS-B's stored cosines x 100 is the logged score, STS12's size-weighted mean of its subsets'
    Spearmans its logged `spearman_wmean` (to 1e-12), and every score harness.stats recomputes from the
    record is the logged one."""
    record = read_items(Path(tracker.client.download_artifacts(child.info.run_id, ARTIFACT, str(scratch))))
    assert list(record.task.unique()) == list(STS_TASKS)
    stsb = record[record.task == "STSBenchmark"]
    spearman = 100 * spearmanr(stsb.prediction, stsb.gold).statistic
    assert spearman == pytest.approx(metrics["STSBenchmark.spearman"], abs=1e-12)
    sts12 = [part for _, part in record[record.task == "STS12"].groupby("subset", sort=False)]
    spearmans = np.array([100 * spearmanr(p.prediction, p.gold).statistic for p in sts12])
    sizes = np.array([len(p) for p in sts12], dtype=np.float64)
    wmean = (spearmans * sizes).sum() / sizes.sum()
    assert wmean == pytest.approx(metrics["STS12.spearman_wmean"], abs=1e-12)
    for name, value in point_scores(record).items():
        assert value == pytest.approx(metrics[name], abs=1e-9), name


@pytest.mark.slow
def test_failing_trial_is_recorded_and_study_goes_on(tmp_path: Path, tiny_bert: Path) -> None:
    study = load_study(tiny_study(tmp_path, tiny_bert, {"lr": [1e-4, 1e30]}, name="diverge"))
    opt = run_study(study, progress=False)
    states = {t.params["lr"]: t for t in opt.trials}
    assert states[1e-4].state.name == "COMPLETE"
    assert states[1e30].state.name == "FAIL" and "loss became nan" in states[1e30].user_attrs["error"]
    runs = {float(r.data.params["lr"]): r for r in child_runs("diverge")}
    assert runs[1e-4].info.status == "FINISHED"
    assert runs[1e30].info.status == "FAILED" and "TrainingDiverged" in runs[1e30].data.tags["error"]


def _start(yaml_path: str, home: Path) -> Launched:
    # each trial waits 3 s once its MLflow run is recorded (tests/pauses.py, at the pause point
    # trial_started): the signal lands in a trial
    env = {"HARNESS_HOME": str(home), "HARNESS_PAUSE_AT": "trial_started=3"}
    return launch(["run-study", yaml_path, "--no-progress"], home.parent / "run-study.log", env)


def _wait_for_second_trial(study_name: str, home: Path, proc: Launched) -> None:
    storage = open_storage(str(home / "optuna.journal"))
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.output()
        try:
            trials = optuna.load_study(study_name=study_name, storage=storage).trials
        except KeyError:
            trials = []
        second = trials[1] if len(trials) >= 2 else None
        if (
            second
            and trials[0].state.name == "COMPLETE"
            and second.state.name == "RUNNING"
            and MLFLOW_RUN in second.user_attrs
        ):
            return  # the second trial is in its pause
        time.sleep(0.3)
    pytest.fail("the study did not reach its second trial in time")


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "killed"]
)
@pytest.mark.slow
def test_interrupted_study_resumes(tmp_path: Path, tiny_bert: Path, harness_home: Path, sig: int) -> None:
    yaml_path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5, 0.9]}, name="resume", max_steps=6)
    proc = _start(yaml_path, harness_home)
    _wait_for_second_trial("resume.tiny", harness_home, proc)
    proc.send_signal(sig)
    proc.wait(timeout=120)
    out = proc.output()
    if sig != signal.SIGKILL:  # Ctrl-C and SIGTERM (harness.fleet.signals): a clean stop, nothing RUNNING
        reason = "interrupted (Ctrl-C)" if sig == signal.SIGINT else "terminated by SIGTERM"
        assert proc.returncode == 128 + sig, out
        assert "re-run the same command to resume" in out and "Traceback" not in out
        runs = child_runs("resume")
        assert not [r for r in runs if r.info.status == "RUNNING"]
        (stopped,) = [r for r in runs if r.info.status == "KILLED"]
        assert stopped.data.tags["error"].startswith(f"{reason}; re-run the study")
        tracker = Tracker()
        (parent,) = tracker.client.search_runs(
            [tracker.experiment_id("resume")], "tags.`harness.role` = 'study'"
        )
        assert parent.info.status == "KILLED" and parent.data.tags["outcome"].startswith(reason)

    study = load_study(yaml_path)
    opt = run_study(study, progress=False)  # the same command again
    trials = opt.trials
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["lambda"] for t in complete) == [0.1, 0.5, 0.9]
    assert trials[0].state.name == "COMPLETE" and trials[0] in complete  # finished work is kept, not re-run
    assert len(trials) == 4 and trials[1].state.name == "FAIL" and trials[1].user_attrs["interrupted"]
    assert trials[2].params == trials[1].params and trials[2].user_attrs["retry_of"] == 1  # re-queued first
    runs = child_runs("resume")
    assert not [r for r in runs if r.info.status == "RUNNING"]
    assert sorted(r.info.status for r in runs) == ["FINISHED", "FINISHED", "FINISHED", "KILLED"]
    assert all(math.isfinite(t.value) for t in complete)


@pytest.mark.slow
def test_two_worker_processes_share_one_study(tmp_path: Path, tiny_bert: Path) -> None:
    study = load_study(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3, 0.5, 0.9]}, name="parallel",
                                  final_tasks=["quick"]))  # fmt: skip
    opt = run_study(study, workers=2, progress=False)
    complete = [t for t in opt.trials if t.state.name == "COMPLETE"]
    assert sorted(t.params["lambda"] for t in complete) == [0.1, 0.3, 0.5, 0.9]
    runs = child_runs("parallel")
    assert [r.info.status for r in runs] == ["FINISHED"] * len(runs) and len(runs) == len(opt.trials)
    assert len({r.data.tags["mlflow.parentRunId"] for r in runs}) == 1
    assert len({r.data.tags["worker"] for r in runs}) == 2  # both processes took trials


@pytest.mark.slow
def test_sigterm_reaches_the_local_workers(tmp_path: Path, tiny_bert: Path, harness_home: Path) -> None:
    """Issue 26 item 1: `run-study --workers 2` SIGTERMed while both workers are in a trial passes the
    signal on: exit 143 at once, both trial runs KILLED "terminated by SIGTERM", the parent run KILLED."""
    yaml_path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5, 0.9]}, name="term_workers",
                           max_steps=6, final_tasks=["quick"])  # fmt: skip
    env = {"HARNESS_HOME": str(harness_home), "HARNESS_PAUSE_AT": "trial_started=60"}
    args = ["run-study", yaml_path, "--workers", "2", "--no-progress"]
    proc = launch(args, tmp_path / "run-study.log", env)  # its workers: fresh `python -m harness` processes
    storage = open_storage(str(harness_home / "optuna.journal"))
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.output()
        try:
            trials = optuna.load_study(study_name="term_workers.tiny", storage=storage).trials
        except KeyError:
            trials = []
        if sum(t.state.name == "RUNNING" and MLFLOW_RUN in t.user_attrs for t in trials) == 2:
            break
        time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    out = proc.output()
    print(f"{time.monotonic() - started:.1f} s from SIGTERM to exit\n{out}")
    assert proc.returncode == 143 and "Traceback" not in out
    runs = child_runs("term_workers")
    assert sorted(r.info.status for r in runs) == ["KILLED", "KILLED"]
    assert all(r.data.tags["error"].startswith("terminated by SIGTERM") for r in runs)
    tracker = Tracker()
    (parent,) = tracker.client.search_runs(
        [tracker.experiment_id("term_workers")], "tags.`harness.role` = 'study'"
    )
    assert parent.info.status == "KILLED" and parent.data.tags["outcome"].startswith("terminated by SIGTERM")
