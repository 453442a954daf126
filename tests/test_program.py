"""Suggested commands are written as the user runs the harness (`.venv/bin/harness` from the README)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.program import as_invoked, program


def test_a_path_not_on_the_path_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / ".venv" / "bin" / "harness"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [".venv/bin/harness", "run-study"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert program() == ".venv/bin/harness"
    assert as_invoked("next: `harness report x` writes") == "next: `.venv/bin/harness report x` writes"
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(script.parent))  # activated: the same file is `harness` on the PATH
    assert program() == "harness"


def test_python_dash_m_keeps_the_plain_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/x/harness/__main__.py"])
    assert as_invoked("`harness ui`") == "`harness ui`"
