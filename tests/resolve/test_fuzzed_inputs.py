"""Fuzzed study YAML, report specs and `--set` values (hypothesis): any input either loads or ends in one
clear line (a HarnessError, which the command line prints as `error: ...` with exit 2), never another
exception, and reading it writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from harness.errors import HarnessError  # noqa: E402
from harness.report import spec as report_spec  # noqa: E402
from harness.resolve.overrides import parse_override  # noqa: E402
from harness.resolve.study_spec import load_study  # noqa: E402

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(), st.text(max_size=10))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
TOP = ["description", "sampler", "n_trials", "objectives", "pruner", "save_top_k", "default_profile", "seeds",
       "variants", "profiles"]  # fmt: skip
FIELDS = ["method", "model", "lr", "batch_size", "max_steps", "temperature", "eval_suite", "final_tasks",
          "pooling", "stages", "contrastive_data", "seed"]  # fmt: skip
STUDIES = st.fixed_dictionaries(
    {"name": st.just("fuzz") | SCALARS},
    optional={
        **{key: VALUES for key in TOP},
        "base": st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=5) | VALUES,
        "search": st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=3) | VALUES,
    },
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
VALID = {"name": "fuzz", "base": {"method": "unsup_simcse", "model": "all-MiniLM-L6-v2", "max_steps": 2},
         "search": {"temperature": [0.05, 0.1]}}  # fmt: skip


def _loads_or_says_one_line(action: object, folder: Path) -> None:
    before = sorted(folder.rglob("*"))
    try:
        action()  # type: ignore[operator]
    except HarnessError as exc:
        assert str(exc) and "\n" not in str(exc)
    assert sorted(folder.rglob("*")) == before  # nothing written


@pytest.mark.slow
@FUZZ
@given(study=STUDIES)
def test_a_fuzzed_study_loads_or_says_one_line(tmp_path: Path, study: dict) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(study))
    _loads_or_says_one_line(lambda: load_study(str(path)), tmp_path)


@FUZZ
@given(text=st.text(max_size=200))
def test_fuzzed_text_as_a_study_file_loads_or_says_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "text.yaml"
    path.write_text(text, encoding="utf-8")
    _loads_or_says_one_line(lambda: load_study(str(path)), tmp_path)


@FUZZ
@given(option=st.sampled_from(["--set", "--search"]), given_text=st.text(max_size=40))
def test_a_fuzzed_set_or_search_loads_or_says_one_line(tmp_path: Path, option: str, given_text: str) -> None:
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(VALID))
    _loads_or_says_one_line(
        lambda: load_study(str(path), overrides=[parse_override(option, given_text)]), tmp_path
    )


@FUZZ
@given(
    spec=st.fixed_dictionaries(
        {"study": st.just("fuzz") | SCALARS},
        optional={k: VALUES for k in ("title", "tables", "figures", "claims")},
    )
)
@pytest.mark.slow
def test_a_fuzzed_report_spec_loads_or_says_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: dict
) -> None:
    folder = tmp_path / "reports"
    folder.mkdir(exist_ok=True)
    (folder / "fuzz.yaml").write_text(yaml.safe_dump(spec))
    monkeypatch.setattr(report_spec, "REPORTS_DIR", folder)
    _loads_or_says_one_line(lambda: report_spec.load_spec("fuzz"), tmp_path)
