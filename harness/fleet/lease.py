"""One coordinator per study: a lease kept in the study's own storage (a study user attribute).

`harness run-study` takes the lease before it touches the study (re-queueing interrupted trials, --fresh)
and renews it every TTL/3 seconds from a background thread; a second `run-study` on the same study finds a
live lease held by someone else and stops with one line (workers, `harness worker`, need no lease: they
only take trials). A coordinator killed with SIGKILL leaves a lease that expires after TTL seconds; on the
same host a lease whose process is gone is taken over at once.

Taking it is read, write, wait, read again: when two coordinators write at the same moment the storage
keeps one value, and the one that does not find its own token on the second read steps back.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
import warnings
from datetime import datetime

import optuna

from harness.errors import HarnessError, ServiceUnavailable
from harness.fleet.optuna_access import storage_of, study_id
from harness.processes import alive

LEASE = "coordinator"
TTL = float(os.environ.get("HARNESS_LEASE_TTL", "60"))
SETTLE = 0.3


class CoordinatorLease:
    """`with CoordinatorLease(study, command):` holds the study for this process, or raises."""

    def __init__(self, opt: optuna.Study, command: str) -> None:
        self.opt = opt
        self.command = command
        self.token = uuid.uuid4().hex
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _read(self) -> dict:
        attrs = storage_of(self.opt).get_study_user_attrs(study_id(self.opt))
        return dict(attrs.get(LEASE) or {})

    def _write(self, expires: float) -> None:
        value = {
            "token": self.token,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "expires": expires,
            "command": self.command,
        }
        storage_of(self.opt).set_study_user_attr(study_id(self.opt), LEASE, value)

    def _held_by_other(self, lease: dict) -> bool:
        if not lease or lease.get("token") == self.token or lease.get("expires", 0) < time.time():
            return False
        if lease.get("host") != socket.gethostname():
            return True
        pid = int(lease.get("pid", 0))  # this process (an earlier coordinator of it that could not
        return pid != os.getpid() and alive(pid)  # release, in an outage) or a process that is gone

    def _refuse(self, lease: dict) -> None:
        until = datetime.fromtimestamp(lease["expires"]).strftime("%H:%M:%S")
        raise HarnessError(
            f"study {self.opt.study_name} is already coordinated by pid {lease.get('pid')} on "
            f"{lease.get('host')} (lease until {until}, renewed while it runs); add workers with "
            "`harness worker` instead, or wait for it to end"
        )

    def acquire(self) -> CoordinatorLease:
        lease = self._read()
        if self._held_by_other(lease):
            self._refuse(lease)
        self._write(time.time() + TTL)
        time.sleep(SETTLE)
        lease = self._read()
        if lease.get("token") != self.token:
            self._refuse(lease)
        self._thread = threading.Thread(target=self._renew, name="harness-lease", daemon=True)
        self._thread.start()
        return self

    def _renew(self) -> None:
        while not self._stop.wait(TTL / 3):
            try:
                if self._read().get("token") != self.token:  # taken over after an outage: never fight
                    warnings.warn(f"lost the coordinator lease of {self.opt.study_name}", stacklevel=1)
                    return
                self._write(time.time() + TTL)
            except Exception:  # a storage hiccup: the next renewal tries again
                continue
            except ServiceUnavailable:  # the database is gone for good: the coordinator is stopping
                return

    def stop_renewing(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def release(self) -> None:
        """Give the lease up; where the storage cannot be written (an outage) it expires by itself."""
        self.stop_renewing()
        with contextlib.suppress(Exception, ServiceUnavailable):
            if self._read().get("token") == self.token:
                self._write(0.0)

    def __enter__(self) -> CoordinatorLease:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
