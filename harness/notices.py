"""One line for the person at the terminal, on stderr, printed through tqdm so that progress bars stay
whole: warnings of outages, notices said once per process."""

from __future__ import annotations

import sys

_SAID: set[str] = set()


def notice(line: str) -> None:
    from harness.bar_line import say

    say(line, file=sys.stderr)


def notice_once(line: str) -> None:
    """`notice`, once per process (a study's trials share their stages' sizes, say)."""
    if line not in _SAID:
        _SAID.add(line)
        notice(line)
