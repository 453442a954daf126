from pathlib import Path

import pytest

from harness.data.paths import resolve_data_dir
from harness.errors import HarnessError


def test_explicit_beats_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", "/nonexistent")
    assert resolve_data_dir(tmp_path) == tmp_path.resolve()


def test_missing_root_names_path_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_DATA_DIR", "/no/such/dir")
    with pytest.raises(HarnessError, match=r"/no/such/dir.*HARNESS_DATA_DIR"):
        resolve_data_dir()


def test_default_is_shared_data(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.delenv("HARNESS_DATA_DIR")
    assert resolve_data_dir() == data_dir
