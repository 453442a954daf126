"""A local worker's messages on a terminal it shares with its coordinator (harness.bar_line) start at
column 0 and clear what the coordinator's bar left on the line; to a file, and from a lone process,
they are plain lines."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from harness import bar_line
from harness.notices import notice

LINE = "trial 3 (tau=0.1): dev score 80.1 in 9 s"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def line() -> Iterator[None]:
    yield
    bar_line.use_line(0)


def test_a_local_workers_lines_start_at_column_0_and_clear_the_rest(line: None) -> None:
    terminal, log = Terminal(), io.StringIO()
    bar_line.use_line(2)
    assert bar_line.bar_line() == 2
    bar_line.say(LINE, file=terminal)
    bar_line.say(LINE, file=log)  # stdout redirected to a file while stderr (the bars) is a terminal
    assert terminal.getvalue() == f"\r{LINE}\x1b[K\n"
    assert log.getvalue() == f"{LINE}\n"


def test_a_lone_process_writes_plain_lines_where_tqdm_puts_them(
    line: None, capsys: pytest.CaptureFixture[str]
) -> None:
    bar_line.use_line(0)
    terminal = Terminal()
    bar_line.say(LINE, file=terminal)
    assert bar_line.bar_line() is None and terminal.getvalue() == f"{LINE}\n"
    notice("paper defaults for fields the study leaves unset: ...")
    assert capsys.readouterr().err == "paper defaults for fields the study leaves unset: ...\n"
