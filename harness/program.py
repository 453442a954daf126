"""How the user runs the harness, so that the commands its messages suggest are ones they can paste: a
README user types `.venv/bin/harness`, where an activated virtual environment (or `pip install`) gives
`harness`; `python -m harness` and `harness` on the PATH keep `harness`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def program() -> str:
    """`harness` when that name runs this same program from the PATH, else the path it was run by."""
    invoked = sys.argv[0] if sys.argv else ""
    if Path(invoked).name != "harness":  # `python -m harness`, a test, an embedding program
        return "harness"
    on_path = shutil.which("harness")
    if on_path and Path(on_path).resolve() == Path(invoked).resolve():
        return "harness"
    return invoked


def as_invoked(text: str) -> str:
    """`text` with each suggested command (`` `harness ...` ``) written as the user runs the harness."""
    name = program()
    return text if name == "harness" else text.replace("`harness ", f"`{name} ")
