"""harness.fleet.journal: a Ctrl-C that arrives while a journal write holds Optuna's lock acts after the
write, so the log line is written, the lock released and the interruption not lost."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from optuna.storages.journal import JournalFileBackend, JournalFileSymlinkLock

from harness.fleet.journal import SteadyJournalBackend


class CtrlCWhileLocked(JournalFileSymlinkLock):
    """The lock of a process that receives Ctrl-C just after taking it."""

    def acquire(self) -> bool:
        taken = super().acquire()
        os.kill(os.getpid(), signal.SIGINT)
        return taken


@pytest.mark.parametrize("backend", [SteadyJournalBackend, JournalFileBackend], ids=["steady", "optuna"])
def test_ctrl_c_inside_a_write_acts_after_it(tmp_path: Path, backend: type[JournalFileBackend]) -> None:
    path = tmp_path / "optuna.journal"
    journal = backend(str(path), lock_obj=CtrlCWhileLocked(str(path)))
    with pytest.raises(KeyboardInterrupt):
        journal.append_logs([{"op_code": 0, "worker_id": "w"}])
    written = [json.loads(line) for line in path.read_text().splitlines()]
    leftover = [p.name for p in tmp_path.iterdir() if p != path]
    if backend is SteadyJournalBackend:
        assert written == [{"op_code": 0, "worker_id": "w"}] and leftover == []
    else:  # Optuna's own backend, for contrast: nothing written and its lock left for others to wait out
        assert written == [] and leftover == ["optuna.journal.lock"]
