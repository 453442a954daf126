"""The tests' pauser (harness.fleet.pause_points): a process whose environment has
`HARNESS_PAUSE_AT="<point>=<seconds>[,<point>=<seconds>...]"` sleeps that long each time it reaches a
named point (less, once the file named by HARNESS_PAUSE_RELEASE exists: a test that has done its part lets
it go on, and no later pause holds it). Unset, a point costs one environment lookup.

Importing this module installs the pauser, here and in the fork server that launched commands are forked
from (it adds itself to the server's preloaded modules, so a command that starts workers of its own
passes it on to theirs)."""

from __future__ import annotations

import os
import time

from harness.fleet import forked
from harness.fleet.pause_points import install_pauser


def pause_at(point: str) -> None:
    """Sleep at `point` as HARNESS_PAUSE_AT says (see the module's docstring)."""
    spec = os.environ.get("HARNESS_PAUSE_AT")
    if not spec:
        return
    for item in spec.split(","):
        name, _, seconds = item.partition("=")
        if name.strip() == point:
            _sleep(float(seconds), os.environ.get("HARNESS_PAUSE_RELEASE"))


def _sleep(seconds: float, release: str | None) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0 and not (release and os.path.exists(release)):
        time.sleep(min(left, 0.1) if release else left)


install_pauser(pause_at)
if __name__ not in forked.PRELOAD:
    forked.PRELOAD.insert(len(forked.PRELOAD) - 1, __name__)  # before the server's last step (it freezes)
