"""Issue 42 item 12: a run rebuilt from its own record (the logged fields: MLflow params, config.yaml) is
the run that logged them, bit for bit: the same settings, parameters, stages and data source. A preset that
decides a method-level field when it is unset (sup_simcse's `mlp_at_test` with NLI trained) logs what it
decided, not the field's default."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.registry import METHODS
from harness.resolve.run_spec import ResolvedRun, resolve_run
from harness.resolve.study_spec import STUDIES_DIR, load_study, read_study

NEEDS = {"ensemble": {"source_study": "chen_supervised"}, "pipeline": {"stages": [{"contrastive": "unsup"}]}}


def _same_when_read_back(run: ResolvedRun) -> None:
    logged = dict(run.flat())
    logged.pop("variant", None)
    again = resolve_run(logged)
    assert again.settings == run.settings
    assert again.params == run.params
    assert again.stages == run.stages
    assert again.nli == run.nli


@pytest.mark.parametrize("method", sorted(METHODS.entries()))
def test_every_method_reads_back_as_it_ran(method: str) -> None:
    _same_when_read_back(resolve_run({"method": method, **NEEDS.get(method, {})}))


def test_sup_simcse_with_nli_logs_the_mlp_it_keeps_at_test() -> None:
    run = resolve_run({"method": "sup_simcse", "sup_data": ["quora", "nli"]})
    assert run.params.mlp_at_test and run.flat()["mlp_at_test"] is True  # SimCSE's supervised model
    _same_when_read_back(run)
    assert resolve_run({"method": "sup_simcse"}).flat()["mlp_at_test"] is False  # Quora alone: no MLP


@pytest.mark.parametrize("path", sorted(STUDIES_DIR.glob("*.yaml")), ids=lambda p: Path(p).stem)
def test_every_shipped_profile_reads_back_as_it_ran(path: Path) -> None:
    for profile in read_study(path).profiles or {"base": None}:
        for run in load_study(str(path), profile).grid_runs():
            _same_when_read_back(run)
