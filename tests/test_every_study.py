"""Every shipped study end to end: its smoke profile on the tiny random BERT with a 2-step budget per
stage, then its shipped report spec over the runs (tables' rows, the paper's reference rows)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from harness.report.build import build_report
from harness.report.parts.grid_table import GridTable
from harness.report.parts.runs_table import RunsTable
from harness.report.spec import load_spec
from harness.resolve.study_spec import STUDIES_DIR, load_study
from harness.study.runner import run_study
from tests.conftest import DATA

STUDIES = sorted(p.stem for p in STUDIES_DIR.glob("*.yaml"))
SOURCES = {
    "chen_ensemble": ["chen_supervised", "chen_negatives"],
    "david_ensemble": ["david_ensemble_members"],
}


def _two_steps(node: Any) -> Any:
    """Every step budget in a profile's variant overrides set to 2, every repeat to 1."""
    if isinstance(node, dict):
        out = {k: _two_steps(v) for k, v in node.items()}
        if "max_steps" in out:
            out["max_steps"] = 2
        if "repeat" in out:
            out["repeat"] = 1
        return out
    return [_two_steps(v) for v in node] if isinstance(node, list) else node


def tiny_copy(name: str, folder: Path, tiny_bert: Path) -> Path:
    """The study with one profile, `tiny`: its smoke profile on the tiny BERT, 2 steps a stage."""
    config = yaml.safe_load((STUDIES_DIR / f"{name}.yaml").read_text())
    smoke = _two_steps(config["profiles"]["smoke"])
    base = {**config.get("base", {}), **smoke.get("base", {})}
    if base.get("method") != "ensemble":
        tiny = {"model": str(tiny_bert), "max_steps": 2, "precision": "fp32", "max_seq_length": 32,
                "eval_batch_size": 512, "batch_size": 8}  # fmt: skip
        if os.environ.get("SAME_METRICS_COMPILE"):  # the guard's compiled side (tests/same_metrics.py)
            tiny["compile"] = True
        smoke["base"] = {**smoke.get("base", {}), **tiny}
        if base.get("train_data") == "snli_local" or base.get("method") == "scl":
            smoke["base"].update(train_data="snli_local", snli_splits=["dev"], train_limit=60)
    else:
        smoke["base"]["source_profile"] = "tiny"
    config["profiles"] = {"tiny": smoke}
    config["default_profile"] = "tiny"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _first_two_components(vectors: np.ndarray) -> tuple[np.ndarray, str]:
    centred = vectors - vectors.mean(0)
    return centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T, "PCA"


def _left_out(profile: str) -> tuple[str, ...]:
    """How the notes name a part the report left out: not built (and why), or not run or evaluated by
    the profile."""
    return (
        " not built",
        f": profile {profile} does not evaluate",
        f": profile {profile} runs none of its rows",
    )


def _logs_its_plan(opt: Any, folder: Path) -> None:
    """Every finished trial logged its plan, and its final metrics are the ones the plan names (what the
    report, which reads plans, takes a profile to evaluate)."""
    from harness.fleet.recovery import MLFLOW_RUN
    from harness.tracking.metric_names import metrics_of
    from harness.tracking.tracker import Tracker

    tracker = Tracker()
    for trial in opt.trials:
        if "skipped" in trial.user_attrs:
            continue
        run_id = trial.user_attrs[MLFLOW_RUN]
        plan = json.loads(tracker.download(run_id, "plan.json", folder / run_id).read_text())
        logged = set(metrics_of(tracker.get_run(run_id)))
        assert set(plan["scoring"]["final_metrics"]) <= logged, (
            trial.number,
            set(plan["scoring"]["final_metrics"]) - logged,
        )
        assert set(plan["metrics"]) <= logged, (trial.number, set(plan["metrics"]) - logged)


def _the_dry_run_counted_its_steps(study: Any, opt: Any) -> None:
    """Issue 58 item 3: the dry run's step count of every trial that trains is a number, and the number
    of steps the trial took."""
    from harness.fleet.recovery import MLFLOW_RUN
    from harness.planning.dry_run import trial_steps
    from harness.tracking.metric_names import metrics_of
    from harness.tracking.tracker import Tracker

    tracker = Tracker()
    for trial in opt.trials:
        run = study.resolve(trial.params)
        if "skipped" in trial.user_attrs or not run.method.trains:
            continue
        planned, _ = trial_steps(run, DATA)
        taken = metrics_of(tracker.get_run(trial.user_attrs[MLFLOW_RUN]))["train.steps"]
        assert planned.lstrip("~").isdigit() and int(planned.lstrip("~")) == taken, (
            trial.params,
            planned,
            taken,
        )


@pytest.mark.slow
@pytest.mark.parametrize("name", STUDIES)
def test_the_study_runs_on_the_tiny_bert_and_its_report_is_built(
    name: str, tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The projection figures' t-SNE (8 s a panel of 1,101 SST sentences on one core) is tested in
    # tests/report/test_projection.py; here the figure is drawn from the runs' saved embeddings over PCA.
    monkeypatch.setattr("harness.report.parts.projection.reduce_2d", _first_two_components)
    for study in SOURCES.get(name, []):  # the studies an ensemble reads, run first
        run_study(load_study(str(tiny_copy(study, tmp_path, tiny_bert))), progress=False)
    study = load_study(str(tiny_copy(name, tmp_path, tiny_bert)))
    opt = run_study(study, progress=False)
    states = {t.state.name for t in opt.trials if "skipped" not in t.user_attrs}  # GloVe without vectors
    assert states == {"COMPLETE"}, [(t.state.name, t.user_attrs) for t in opt.trials]
    assert len(opt.trials) == study.n_trials
    _logs_its_plan(opt, tmp_path)
    _the_dry_run_counted_its_steps(study, opt)

    latex = shutil.which("pdflatex") is not None  # where it is installed, the PDF must build too
    folder, _ = build_report(name, None, str(tmp_path / "reports"), None, pdf=latex)
    document = (folder / "report.tex").read_text()
    assert (folder / "report.pdf").is_file() or not latex
    assert (folder / "study.yaml").is_file()  # the YAML as the study ran, beside its report
    for trial in opt.trials:  # a skipped row is named in the report with its reason
        if "skipped" in trial.user_attrs:
            assert f"Not in the tables: {trial.params['variant']}".replace("_", "\\_") in document
    spec = load_spec(name)
    built = 0
    for table in spec.tables:
        path = folder / f"{table.name}.tex"
        if not path.is_file():  # named in the notes: not evaluated by this profile, or not built and why
            plain = document.replace("\\_", "_")
            assert any(f"{table.name}{said}" in plain for said in _left_out(study.profile))
            continue
        built += 1
        latex = path.read_text()
        assert "\\toprule" in latex and "\\bottomrule" in latex
        if isinstance(table, RunsTable | GridTable) and table.reference:
            assert table.reference_source in latex  # the paper's rows printed beside the harness's
    for figure in spec.figures:
        plain = document.replace("\\_", "_")
        assert (folder / f"{figure.name}.png").is_file() or any(
            f"{figure.name}{said}" in plain for said in _left_out(study.profile)
        )
    assert built >= 1 or not spec.tables
