"""A local worker's messages on a terminal it shares with its coordinator (harness.bar_line) start at
column 0 and clear what the coordinator's bar left on the line; a lone process's are plain lines."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from harness import bar_line
from harness.notices import notice


@pytest.fixture
def line() -> Iterator[None]:
    yield
    bar_line.use_line(0)


def test_a_local_workers_lines_start_at_column_0_and_clear_the_rest(line: None) -> None:
    out = io.StringIO()
    bar_line.use_line(2)
    assert bar_line.bar_line() == 2
    bar_line.say("trial 3 (tau=0.1): dev score 80.1 in 9 s", file=out)
    assert out.getvalue() == "\rtrial 3 (tau=0.1): dev score 80.1 in 9 s\x1b[K\n"


def test_a_lone_process_writes_plain_lines_where_tqdm_puts_them(
    line: None, capsys: pytest.CaptureFixture[str]
) -> None:
    bar_line.use_line(0)
    assert bar_line.bar_line() is None
    notice("paper defaults for fields the study leaves unset: ...")
    assert capsys.readouterr().err == "paper defaults for fields the study leaves unset: ...\n"
