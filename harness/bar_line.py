"""Where a process's progress bars and messages go on the terminal.

`run-study --workers N` draws the study's bar (trials done, best so far) and starts local worker k with
`--position k`: on a terminal that worker draws no study bar of its own (it would repeat the
coordinator's, with a total of its own) and puts its trial's bars (a stage's training, the final
encoding; one at a time) on line k below the cursor, so N workers' bars stack under the study bar
instead of overwriting it. Its messages (`say`) start at column 0 and clear the rest of the line (the
cursor is wherever the coordinator's bar left it, at the end of a line) where they go to a terminal.
Every other process (a study's only worker, a `harness worker` started by hand without `--position`,
output to files) leaves the placing to tqdm.
"""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm.auto import tqdm

_line: int | None = None


def use_line(line: int) -> None:
    """This process's bars go on terminal line `line` (0: wherever tqdm places them)."""
    global _line
    _line = line or None


def bar_line() -> int | None:
    """tqdm's `position` for this process's trial bars: None unless a coordinator gave it a line."""
    return _line


def say(text: str, file: TextIO | None = None) -> None:
    """One line through tqdm (this process's bars are cleared and drawn again around it); to stdout."""
    out = file or sys.stdout
    tqdm.write(f"\r{text}\x1b[K" if _line and out.isatty() else text, file=out)
