"""`harness plan`'s calibrations kept per machine: a stage's seconds per step, an evaluation's seconds per
token and the transfer fits' seconds, measured once for each shape (harness.planning.cost) and read back by
the next plan on the same machine, so a second plan of a study costs no calibration.

The machine is what the timings depend on: the device and its model (GPU name, or CPU model, capability
and native bf16), the thread count, torch's version and the timed steps per stage. A file per machine
under <home>/cache/plan-calibration/, JSON: each measurement by its shape's key (the key's repr: tuples of
names and numbers), with the date it was measured. Shared VMs differ from one session to the next, so the
plan says when its figures were measured; `harness plan --recalibrate` measures again."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import torch

from harness.device import hardware_tags
from harness.home import harness_home
from harness.staging import written_atomically


def machine(device: torch.device, steps: int) -> dict[str, str]:
    """What a calibration's timings depend on, besides the shapes."""
    tags = {k: v for k, v in hardware_tags(device).items() if k not in ("precision", "gpu.visible")}
    return {**tags, "torch": torch.__version__, "timed_steps": str(steps)}


class CalibrationCache:
    """The measurements of one machine: read at start, written back by `save` when something was added."""

    def __init__(self, device: torch.device, steps: int, folder: Path | None = None, fresh: bool = False):
        self.machine = machine(device, steps)
        digest = hashlib.sha256(json.dumps(self.machine, sort_keys=True).encode()).hexdigest()[:16]
        self.path = (folder or harness_home() / "cache" / "plan-calibration") / f"{digest}.json"
        self.saved: dict[str, dict[str, list[Any]]] = {} if fresh else self._read()
        self.reused: list[str] = []  # dates of the measurements read back
        self.measured = 0

    def _read(self) -> dict[str, dict[str, list[Any]]]:
        try:
            stored = json.loads(self.path.read_text())
        except (OSError, ValueError):  # none yet, or a damaged file: measure again
            return {}
        return stored.get("measured", {}) if stored.get("machine") == self.machine else {}

    def get(self, table: str, key: Any) -> Any | None:
        """The stored measurement of `key` in `table`, or None."""
        found = self.saved.get(table, {}).get(repr(key))
        if found is None:
            return None
        self.reused.append(found[1])
        value = found[0]
        return tuple(value) if isinstance(value, list) else value

    def put(self, table: str, key: Any, value: Any) -> None:
        self.measured += 1
        self.saved.setdefault(table, {})[repr(key)] = [value, time.strftime("%Y-%m-%d")]

    def save(self) -> None:
        """Write the measurements back (atomically) where this plan measured anything."""
        if not self.measured:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with written_atomically(self.path) as scratch:
            scratch.write_text(json.dumps({"machine": self.machine, "measured": self.saved}, indent=1))

    def summary(self) -> str:
        """One line: what was measured now and what was read back, from when, and how to measure again."""
        now = f"{self.measured} measured now" if self.measured else "nothing measured now"
        if not self.reused:
            return f"calibration: {now}; kept for the next plan on this machine ({self.path})"
        dates = sorted(set(self.reused))
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        return (
            f"calibration: {now}, {len(self.reused)} read back from this machine's cache (measured {when}, "
            f"{self.path}); `harness plan --recalibrate` measures again"
        )
