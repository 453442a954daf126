"""harness.yaml_input: an alias bomb, an oversized file and deep nesting are refused in one line while
being read (before anything expands them); ordinary YAML reads as PyYAML's safe loader reads it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from harness.errors import HarnessError
from harness.yaml_input import MAX_BYTES, load_yaml, read_yaml

BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
)  # nine levels of nine: 9**9 strings for a reader that walks it


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    started = time.monotonic()
    with pytest.raises(
        HarnessError, match=r"^study\.yaml: its aliases \(\*name\) expand to more than 100,000"
    ) as caught:
        load_yaml(BOMB, "study.yaml")
    assert "\n" not in str(caught.value) and time.monotonic() - started < 1


def test_a_file_too_large_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("x: " + "a" * (MAX_BYTES + 1))
    monkeypatch.setattr(Path, "read_text", lambda *a, **k: pytest.fail("read"))
    with pytest.raises(HarnessError, match=r"big\.yaml: 1,000,004 bytes, more than 1,000,000 of YAML"):
        read_yaml(path)


def test_a_value_that_contains_itself_is_refused() -> None:
    with pytest.raises(HarnessError, match=r"^self\.yaml: a YAML value contains itself"):
        load_yaml("a: &a [1, *a]", "self.yaml")


def test_deep_nesting_is_one_line_not_a_recursion_error() -> None:
    with pytest.raises(HarnessError, match="nested more than 50 levels deep"):
        load_yaml("[" * 5000 + "]" * 5000, "deep.yaml")


def test_ordinary_yaml_reads_as_the_safe_loader_reads_it() -> None:
    text = "name: s\nbase: {lr: 2.0e-5, a: &x [1, 2]}\nsearch: {tau: *x}\nwhen: 2020-01-01\n"
    assert load_yaml(text, "s.yaml") == yaml.safe_load(text)
    with pytest.raises(HarnessError, match=r"^s\.yaml:1:1: not valid YAML"):
        load_yaml("!!python/object:os.system {}", "s.yaml")
