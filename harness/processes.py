"""Whether a process named by its host and pid (a worker, a lease or lock holder) is still alive. Only
a process on this host can be checked; one elsewhere counts as alive (its heartbeat or lease decides)."""

from __future__ import annotations

import os
import socket


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def worker_alive(worker: str) -> bool:
    """`worker` is `host:pid` (the trial's `worker` attr and tag)."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return True
    return alive(int(pid))
