"""tests/scheduling.py against pytest-xdist's own scheduler machinery, on a fake pair of workers: the fault
tests go out as one unit, first; a crashed worker's running test is reported, not run again."""

from __future__ import annotations

import pytest

pytest.importorskip("xdist")

from tests.scheduling import SharedServersOnOneWorker  # noqa: E402

COLLECTION = [
    "tests/a.py::test_one",
    "tests/fleet/test_faults.py::test_kill",
    "tests/a.py::test_two",
    "tests/fleet/test_faults.py::test_outage",
    "tests/b.py::test_three",
    "tests/b.py::test_four",
]


class FakeConfig:
    option = type("Options", (), {"loadscopereorder": True})()  # xdist's default

    def getvalue(self, name: str) -> object:
        return {"tx": ["popen", "popen"]}[name]


class FakeWorker:
    def __init__(self, name: str) -> None:
        self.sent: list[list[str]] = []
        self.shutting_down = False
        self.gateway = type("Gateway", (), {"id": name})()

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append([COLLECTION[i] for i in indexes])

    def shutdown(self) -> None:
        pass


def _started() -> tuple[SharedServersOnOneWorker, FakeWorker, FakeWorker]:
    scheduler = SharedServersOnOneWorker(FakeConfig(), None)  # type: ignore[arg-type]
    first, second = FakeWorker("gw0"), FakeWorker("gw1")
    for worker in (first, second):
        scheduler.add_node(worker)  # type: ignore[arg-type]
        scheduler.add_node_collection(worker, COLLECTION)  # type: ignore[arg-type]
    scheduler.schedule()
    return scheduler, first, second


def test_the_fault_tests_go_to_one_worker_first_and_the_rest_one_by_one() -> None:
    _, first, second = _started()
    assert first.sent[0] == [
        "tests/fleet/test_faults.py::test_kill",
        "tests/fleet/test_faults.py::test_outage",
    ]
    assert all(len(batch) == 1 for batch in first.sent[1:] + second.sent)
    assert second.sent[0] == ["tests/a.py::test_one"]  # the single tests in collection order


def test_the_test_running_when_a_worker_crashed_is_reported_not_run_again() -> None:
    scheduler, first, second = _started()
    scheduler.mark_test_complete(first, COLLECTION.index("tests/fleet/test_faults.py::test_kill"))  # type: ignore[arg-type]
    crashed = scheduler.remove_node(first)  # type: ignore[arg-type]
    assert crashed == "tests/fleet/test_faults.py::test_outage"
    resent = [nodeid for batch in second.sent for nodeid in batch]
    assert (
        "tests/fleet/test_faults.py::test_outage" not in resent
        and "tests/fleet/test_faults.py::test_kill" not in resent
    )
    assert set(COLLECTION) - {"tests/fleet/test_faults.py::test_kill", crashed} <= set(resent) | {
        nodeid for unit in scheduler.workqueue.values() for nodeid in unit
    }
