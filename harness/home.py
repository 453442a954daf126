"""Where the harness keeps its local state (stores, caches, machine facts): no heavy imports here."""

from __future__ import annotations

import os
from pathlib import Path


def harness_home() -> Path:
    """`HARNESS_HOME`, else `.harness/` in the working directory: local stores live here."""
    return Path(os.environ.get("HARNESS_HOME", ".harness")).resolve()
