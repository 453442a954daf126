"""The command line: one-line errors, non-zero exits, nothing written on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import harness


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run-study", "lambda_tau_swep"],
            "error: no study 'lambda_tau_swep'; did you mean lambda_tau_sweep?",
        ),
        (["run-study", "lambda_tau_sweep", "--profile", "gpu"], "error: "),
        (
            ["run-study", "lambda_tau_sweep", "--profile", "paper"],
            "error: cannot load model 'google/bert_uncased_L-8_H-512_A-8'",
        ),
        (["run-study", "lambda_tau_sweep", "--data-dir", "/no/such"], "error: data directory /no/such"),
        (["report", "lambda_tau_sweep"], "error: no MLflow store at "),
        (["report"], "error: name one STUDY or give --all"),
        (["report", "lambda_tau_sweep", "--all"], "error: name one STUDY or give --all"),
        # issue 11 item 3
        (["run-study", "{nonutf8}"], "error: {nonutf8}: not UTF-8 text (byte 8); save it as UTF-8"),
        (["eval", "--model", "all-MiniLM-L6-v2", "--device", "nonsense"], "error: unknown device 'nonsense'"),
        (["eval", "--model", "/no/such/model"], "error: model '/no/such/model': no such directory"),
        (["run-study", "lambda_tau_sweep", "--tracking-uri", "foo://bar"], "error: tracking URI 'foo://bar'"),
        (["run-study", "lambda_tau_sweep", "--profile", "smoke", "--storage", "postgresql://u:secret@127.0.0.1:9/d"],
         "error: cannot open Optuna storage postgresql://u:***@127.0.0.1:9/d: no database driver"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(
    harness_home: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    nonutf8 = tmp_path / "nonutf8.yaml"
    nonutf8.write_bytes(b"name: x\n\xff\xfe bad: 1\n")
    result = harness(*[a.format(nonutf8=nonutf8) for a in args], env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(message.format(nonutf8=nonutf8)), result.stderr
    assert "secret" not in result.stderr + result.stdout  # a password never printed
    assert not (harness_home / "optuna.journal").exists() and not (harness_home / "mlflow.db").exists()
    assert not (Path.cwd() / "reports" / "build" / ".lambda_tau_sweep.old").exists()


def test_methods_and_studies_are_listed() -> None:
    methods = harness("methods").stdout
    assert "scl" in methods and "lambda=0.5" in methods and "sbert" in methods
    stage_kinds = methods.split("stage kinds")[1]
    for kind in ("contrastive", "finetune", "fusion", "repeat", "combiner='average'"):
        assert kind in stage_kinds
    assert all(f"\n{name} " in methods for name in ("sts", "multitask", "ensemble"))  # objectives
    studies = harness("studies").stdout
    assert "lambda_tau_sweep" in studies and "smoke" in studies and "30 trials" in studies


def test_a_study_whose_trials_fail_exits_non_zero_and_says_how_to_rerun(
    tmp_path: Path, tiny_bert: Path
) -> None:
    """Issue 11 item 2: weights missing from the model directory fail every trial; the run says so."""
    import shutil

    from harness.tracking import Tracker
    from tests.helpers import tiny_study

    broken = tmp_path / "no-weights"
    shutil.copytree(tiny_bert, broken)
    for weights in broken.glob("*.safetensors"):
        weights.unlink()
    path = tiny_study(tmp_path, broken, {"lambda": [0.1, 0.9]}, name="all-fail", max_steps=1)
    result = harness("run-study", path, "--no-progress")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert sum(" failed: " in line for line in lines) == 2
    rerun = f"`harness run-study {path} --retry-failed`"
    assert lines[-1] == f"2 trial(s) failed, 0 skipped; fix the cause, then re-run them with {rerun}"
    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name("all-fail")
    (parent,) = tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")
    assert parent.info.status == "FAILED" and parent.data.tags["outcome"] == "partial: 2 trial(s) failed"
