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
        (["report", "lambda_tau_sweep"], "error: no MLflow experiment 'lambda_tau_sweep'"),
        (["report"], "error: name one STUDY or give --all"),
        (["report", "lambda_tau_sweep", "--all"], "error: name one STUDY or give --all"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    harness_home: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    result = harness(*args, env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(message), result.stderr
    assert not (harness_home / "optuna.journal").exists()
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
