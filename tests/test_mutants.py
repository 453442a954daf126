"""`make mutants` (mutation/run.py): the declared mutants still match the code, a mutant is written and
put back exactly, and the score's exit status tells a new survivor from an accepted one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mutation.run import Mutant, MutantListError, Outcome, applied, load_mutants, summary


def test_every_declared_mutant_matches_the_code_once() -> None:
    """A refactor that moves a mutated line fails here, not silently in `make mutants`."""
    mutants = load_mutants()
    assert len(mutants) >= 100
    assert len({(m.module, m.original, m.mutated) for m in mutants}) == len(mutants)
    assert all(m.accepted is None or len(m.accepted) > 40 for m in mutants)  # a reason, not a word


def write_list(tmp_path: Path, original: str) -> Path:
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "m.py").write_text("x = 1\ny = x + 1\nz = x + 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text("")
    listed = tmp_path / "mutants.yaml"
    listed.write_text(
        "modules:\n  harness/m.py:\n    tests: [tests/test_m.py]\n    mutants:\n"
        f"      - {{bug: off by one, from: '{original}', to: 'x + 2'}}\n"
    )
    return listed


def test_a_text_found_twice_or_not_at_all_is_refused(tmp_path: Path) -> None:
    listed = write_list(tmp_path, "x + 1")
    with pytest.raises(MutantListError, match="occurs 2 times"):
        load_mutants(listed, tmp_path)
    listed.write_text(listed.read_text().replace("'x + 1'", "'x + 3'"))
    with pytest.raises(MutantListError, match="occurs 0 times"):
        load_mutants(listed, tmp_path)


def test_a_mutant_is_applied_then_put_back_with_its_times(tmp_path: Path) -> None:
    listed = write_list(tmp_path, "y = x + 1")
    (mutant,) = load_mutants(listed, tmp_path)
    path = tmp_path / "harness" / "m.py"
    before, stat = path.read_text(), path.stat()
    with applied(tmp_path, mutant):
        assert path.read_text() == "x = 1\nx + 2\nz = x + 1\n"
        assert path.stat().st_mtime_ns != stat.st_mtime_ns  # the original's bytecode is not reused
    assert path.read_text() == before
    assert os.stat(path).st_mtime_ns == stat.st_mtime_ns


def outcome(killed: bool, accepted: str | None = None) -> Outcome:
    return Outcome(Mutant("harness/m.py", ("tests/test_m.py",), "bug", "a", "b", accepted), killed, 1.0)


@pytest.mark.parametrize(
    ("outcomes", "status", "score"),
    [
        ([outcome(True), outcome(False, "equivalent: the same value")], 0, "1 of 2 mutants killed (50.0%)"),
        ([outcome(True), outcome(False)], 1, "1 of 2"),  # a new survivor: a test is missing
        ([outcome(True), outcome(True, "equivalent: the same value")], 1, "2 of 2"),  # stale acceptance
    ],
)
def test_the_exit_status_fails_on_a_new_survivor_or_a_stale_acceptance(
    outcomes: list[Outcome], status: int, score: str
) -> None:
    text, got = summary(outcomes)
    assert got == status
    assert score in text
