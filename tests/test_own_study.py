"""Issue 21: a researcher's own study: no profiles needed, quick final tasks, the paper defaults a method
applies said and tagged, a dry run that writes nothing, and what the terminal shows."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.resolve.study_spec import STUDIES_DIR, load_study, read_study, trial_count
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, harness, harness_here, on_a_terminal


def own_study(tmp_path: Path, tiny_bert: Path, **profiles: dict) -> Path:
    """The issue's first YAML (unsup_simcse on wiki, temperature searched), on the tiny BERT."""
    config = {
        "name": "my_simcse",
        "description": "SimCSE temperature on wiki sentences",
        "base": {
            "method": "unsup_simcse",
            "model": str(tiny_bert),
            "contrastive_data": ["wiki"],
            "max_steps": 3,
            "batch_size": 16,
            "final_tasks": ["STSBenchmark"],
            "precision": "fp32",
        },
        "search": {"temperature": [0.05, 0.1]},
        **({"profiles": profiles} if profiles else {}),
    }
    path = tmp_path / "my_simcse.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_a_study_without_profiles_runs_its_base_to_a_report(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = own_study(tmp_path, tiny_bert)
    result = harness_here("run-study", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("profile base (the default)\n")
    said = (
        "paper defaults for fields the study leaves unset: pooling=cls_before_pooler (not model: the model's"
    )
    assert said + " own sentence-transformers pooling" in out
    assert "max_seq_length=32 (not 128)" in out
    assert out.count("evaluating 1 task(s): STSBenchmark") == 2
    assert sum(line.startswith("trial ") and " dev score " in line for line in out.splitlines()) == 2
    assert "\r" not in out + result.stderr and "\x1b[" not in out + result.stderr  # no bars off a terminal
    assert "best: trial " in out and "(the objective)" in out
    assert "next: `harness report my_simcse`" in out
    assert "resume or finish later" not in out  # every trial done: nothing to resume (issue 58 item 7)
    assert load_study(str(path)).command(target=str(path)) == f"harness run-study {path}"  # no --profile
    assert "browse: `harness ui`, then http://127.0.0.1:5000/#/experiments/" in out
    assert "workflowType=machine_learning" in out
    runs = child_runs("my_simcse")
    assert len(runs) == 2 and all(r.info.status == "FINISHED" for r in runs)
    for run in runs:  # values in full, then the trial number (a narrow name column shows the values)
        assert (
            run.info.run_name
            == f"temperature={run.data.params['temperature']} (trial {run.data.tags['trial']})"
        )
    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name("my_simcse")
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"  # the UI's model training
    assert experiment.tags["mlflow.note.content"] == "SimCSE temperature on wiki sentences"
    view = json.loads(json.loads(experiment.tags["mlflow.sharedViewState.harness"])["state"])
    assert view["selectedColumns"] == [  # the printed link's; then the final score the study is read by
        "params.`temperature`",
        "metrics.`objective`",
        "metrics.`STSBenchmark.spearman`",
    ]
    (parent,) = tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")
    assert parent.data.tags["mlflow.note.content"] == "SimCSE temperature on wiki sentences"
    assert {"trials/complete", "best/objective"} <= set(parent.data.metrics)
    for run in runs:  # the UI groups charts by the part before '/': training, dev and final scores apart
        stored = set(run.data.metrics)
        assert {
            "train/loss",
            "train/steps",
            "dev/STSBenchmark.spearman",
            "STSBenchmark.spearman",
        } <= stored
        assert next(iter(run.data.metrics)) == "objective"  # first stored: the compare page opens on it
        assert all("/" in k or k.startswith("STSBenchmark.") for k in stored - {"objective"})
        assert run.data.metrics["objective"] == run.data.metrics["dev/STSBenchmark.spearman.best"]
    for run in runs:
        assert run.data.tags["profile"] == "base"
        tag = run.data.tags["paper_defaults"]
        assert tag.startswith("pooling=cls_before_pooler (not model: the model's own sentence-transformers")
        assert "run_unsup_example.sh" in run.data.tags["paper_defaults.source"]
        scored = {k for k in metrics_of(run) if "STSBenchmark" in k and "dev" not in k}
        assert scored and not any(k.startswith("STS12") or "STS12" in k for k in metrics_of(run))
    report = harness_here("report", "my_simcse", "--out", str(tmp_path / "reports"), "--no-pdf")
    assert report.returncode == 0, report.stderr
    assert "Downloading artifacts" not in report.stdout + report.stderr  # MLflow's bars: never
    code, seen = on_a_terminal("report", "my_simcse", "--out", str(tmp_path / "reports"), "--no-pdf")
    lines = seen.replace("\r\n", "\n").split("\n")  # on a terminal: no bar, no blank line per artifact
    assert code == 0 and lines[0] == f"report written to {tmp_path / 'reports' / 'my_simcse'}", seen
    assert "Downloading" not in seen and "" not in lines[:-1], seen
    assert (tmp_path / "reports" / "my_simcse" / "runs.csv").is_file()
    listed = harness("studies").stdout  # shipped studies only: this one lives in tmp_path
    assert "finished here" in listed
    # the same command with --report: nothing left to run, then the report under ./reports/build
    monkeypatch.chdir(tmp_path)
    again = harness_here("run-study", str(path), "--report")
    assert again.returncode == 0, again.stderr
    assert "report: reports/build/my_simcse" in again.stdout and "next: `harness report" not in again.stdout
    table = (tmp_path / "reports" / "build" / "my_simcse" / "results.tex").read_text()
    assert "\\quad 95\\% interval" in table and "items only (1 seed" in table  # from the trials' records
    # --baseline (issue 58 item 5): the other row's paired difference; a row no table has: one line, no files
    compared = harness_here("report", "my_simcse", "--no-pdf", "--baseline", "temperature=0.05")
    assert compared.returncode == 0, compared.stderr
    table = (tmp_path / "reports" / "build" / "my_simcse" / "results.tex").read_text()
    assert "\\quad $-$ temperature = 0.05 (paired) & " in table and "paired on seeds and items" in table
    assert "SentEval" not in table and "CS224N" not in table  # the caption names only the scores shown
    before = sorted(p.name for p in (tmp_path / "reports" / "build").iterdir())
    wrong = harness_here("report", "my_simcse", "--no-pdf", "--baseline", "temperature=0.5")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "--baseline 'temperature=0.5': no table of my_simcse has that row; did you mean" in wrong.stderr
    assert sorted(p.name for p in (tmp_path / "reports" / "build").iterdir()) == before


def test_dry_run_lists_every_trial_and_writes_nothing(
    tmp_path: Path, tiny_bert: Path, harness_home: Path
) -> None:
    path = own_study(tmp_path, tiny_bert)
    result = harness("run-study", str(path), "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("study my_simcse, profile base: 2 trial(s), sampler grid")
    assert "  trial 0: temperature=0.1  steps 3" in lines and "  trial 1: temperature=0.05  steps 3" in lines
    assert any(line.startswith("paper defaults (fields the study leaves unset): pooling=") for line in lines)
    assert not harness_home.exists()  # no journal, no MLflow store


@pytest.mark.slow
def test_dry_run_of_the_smoke_profile_counts_its_steps() -> None:
    result = harness("run-study", "lambda_tau_sweep", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "profile smoke" in result.stdout.splitlines()[0]
    assert result.stdout.count("steps 20") == 4 and "training steps to run: 80" in result.stdout


def test_dry_run_says_what_a_paper_profile_needs_from_the_hub() -> None:
    result = harness("run-study", "lambda_tau_sweep", "--profile", "paper", "--dry-run")
    assert result.returncode == 0, result.stderr
    trials = [line for line in result.stdout.splitlines() if line.startswith("  trial ")]
    assert len(trials) == 30
    assert all(
        "needs: model google/bert_uncased_L-8_H-512_A-8 from the hub; training data:" in t for t in trials
    )


def test_the_default_profile_is_smoke_else_the_only_one_else_the_base(tmp_path: Path) -> None:
    def study(text: str) -> Path:
        path = tmp_path / "s.yaml"
        path.write_text("name: s\nbase: {train_data: snli_local}\n" + text)
        return path

    assert load_study(str(study(""))).profile == "base"
    assert load_study(str(study("profiles: {paper: {}, smoke: {}}\n"))).profile == "smoke"
    assert load_study(str(study("profiles: {tiny: {}}\n"))).profile == "tiny"
    assert (
        load_study(str(study("default_profile: paper\nprofiles: {paper: {}, smoke: {}}\n"))).profile
        == "paper"
    )
    with pytest.raises(
        HarnessError, match=r"has profiles a, b and no default_profile; choose one with --profile"
    ):
        load_study(str(study("profiles: {a: {}, b: {}}\n")))
    with pytest.raises(HarnessError, match=r"no profile 'smoke': the study has no profiles; drop --profile"):
        load_study(str(study("")), "smoke")


def test_every_shipped_study_defaults_to_its_smoke_profile() -> None:
    for path in STUDIES_DIR.glob("*.yaml"):
        assert load_study(str(path)).profile == "smoke", path.name


@pytest.mark.slow
def test_trial_counts_of_the_listing_equal_the_resolved_studies() -> None:
    """`harness studies` counts trials from the YAML alone; the counts equal the resolved studies'."""
    for path in sorted(STUDIES_DIR.glob("*.yaml")):
        study = read_study(path)
        for name, profile in study.profiles.items():
            assert trial_count(study, profile) == load_study(str(path), name).n_trials, (path.name, name)


def test_eval_chooses_the_final_tasks_and_is_refused_for_the_paper_profile(
    tmp_path: Path, tiny_bert: Path
) -> None:
    from harness.resolve.overrides import eval_override
    from harness.resolve.study_spec import refuse_eval_for_paper

    path = own_study(tmp_path, tiny_bert, paper={}, smoke={})
    quick = load_study(str(path), "smoke", [eval_override("quick,SICKRelatedness")])
    assert all(r.settings.final_tasks == ["quick", "SICKRelatedness"] for r in quick.grid_runs())
    assert quick.override_argv == ["--eval", "quick,SICKRelatedness"]  # a worker is given it again
    with pytest.raises(HarnessError, match=r"--eval changes the paper profile's evaluation"):
        refuse_eval_for_paper(load_study(str(path), "paper", [eval_override("quick")]))
    refused = harness("run-study", str(path), "--profile", "paper", "--eval", "quick")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1


def test_final_tasks_resolve_suites_and_refuse_unknown_tasks_and_task_objectives(tmp_path: Path) -> None:
    from harness.resolve.run_spec import resolve_run
    from harness.scoring.sts import final_tasks

    assert final_tasks("sts", ["quick", "SICKRelatedness", "STSBenchmark"]) == [
        "STSBenchmark",
        "SICKRelatedness",
    ]
    assert final_tasks("transfer")[:7] == final_tasks("sts") and "MR" in final_tasks("transfer")
    with pytest.raises(HarnessError, match=r"field 'final_tasks'.*STSBenchmrk"):
        resolve_run({"method": "scl", "final_tasks": ["STSBenchmrk"]})
    with pytest.raises(HarnessError, match=r"field 'final_tasks' applies to runs scored on embeddings"):
        resolve_run({"method": "multitask", "final_tasks": ["quick"]})


def test_paper_defaults_are_recorded_only_where_they_change_a_field_left_unset() -> None:
    from harness.resolve.run_spec import resolve_run

    run = resolve_run({"method": "unsup_simcse", "pooling": "mean", "lr": 2.0e-5})
    changed = {field for field, _, _ in run.paper_defaults}
    assert "pooling" not in changed and "lr" not in changed  # set by the study: its own value wins
    assert {"max_seq_length", "warmup_ratio"} <= changed and run.settings.max_seq_length == 32
    assert "epochs" not in changed  # SimCSE's 1 epoch is the run default already: nothing changed
    own = {"method": "scl", "model": "m", "pooling": "mean", "keep_best": True, "max_grad_norm": 1.0,
           "adam_eps": 1e-6}  # fmt: skip
    assert resolve_run(own).paper_defaults == ()


METHODS = ["scl", "sbert", "unsup_simcse", "sup_simcse", "multitask", "frozen", "contrastive_first",
           "supervised_first", "fusion", "supcl_seq", "pipeline", "ensemble", "glove"]  # fmt: skip


@pytest.mark.parametrize("method", METHODS)
def test_new_writes_a_study_that_resolves(tmp_path: Path, method: str) -> None:
    from harness.commands.new_study import write_study
    from harness.registry import METHODS

    assert method in METHODS.entries()
    path, spec_path = write_study(f"my_{method}", method, str(tmp_path / f"my_{method}.yaml"))
    study = load_study(str(path))  # every grid point validated
    assert study.profile == "base" and study.n_trials >= 1
    text = path.read_text()
    assert text.startswith(f"# my_{method}: a study of your own") and f"harness run-study {path}" in text
    with pytest.raises(HarnessError, match=r"exists; choose another NAME"):
        write_study(f"my_{method}", method, str(path))
    # its report spec beside it (issue 58 item 5): valid, found by `harness report`, claims explained
    from harness.report.spec import load_spec

    assert spec_path == tmp_path / f"my_{method}.report.yaml"
    spec = load_spec(f"my_{method}", study_path=str(path))
    (table,) = spec.tables
    assert table.columns and set(table.columns.values()) <= set(study.grid_runs()[0].plan.metrics)
    searched = [k for k in study.search if k != "seed"]
    if searched:  # the grid's first configuration is the baseline
        assert table.baseline == table.label.format(**{k: study.search[k][0] for k in searched})
    text = spec_path.read_text()
    if searched:  # the commented claim, uncommented, is a valid claim of the spec
        claim = text.split("Uncomment and edit:\n")[1].split("\n# More kinds")[0]
        spec_path.write_text(text + "\n".join(line.removeprefix("# ") for line in claim.splitlines()))
        (claimed,) = load_spec(f"my_{method}", study_path=str(path)).claims
        assert claimed.metric in table.columns.values()


def test_every_registered_method_has_a_new_study_test() -> None:
    from harness.registry import METHODS  # noqa: N811

    assert set(METHODS.entries()) == set(globals()["METHODS"])


@pytest.mark.slow
def test_version_and_listing_commands_answer_without_torch() -> None:
    assert harness("--version").stdout.strip().startswith("harness ")
    code = (
        "import sys; from harness.commands.cli import cli\n"
        "cli.main(['studies'], standalone_mode=False)\n"
        "assert 'torch' not in sys.modules and 'mlflow' not in sys.modules, 'heavy import'\n"
    )
    import subprocess

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "lambda_tau_sweep" in result.stdout


def test_the_demo_install_brings_optuna_dashboard() -> None:
    """`make demo` installs the `demo` extra: `harness dashboard` works on the demo's journal after it."""
    import tomllib

    from tests.conftest import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("optuna-dashboard") for dep in extras["demo"])
    assert ".[demo]" in (REPO / "Makefile").read_text()
