"""How pytest-xdist hands out the tests (tests/conftest.py's `pytest_xdist_make_scheduler`, for the default
`--dist load`): each test on its own, except the modules of ONE_WORKER_MODULES, whose tests share a
module-scoped server and go to one worker together, before the single tests (xdist sends the largest
units first). The suite marks its long tests `slow` and sorts them first (conftest), so the workers end
within seconds of each other.

xdist's own `--dist loadgroup` would group them by mark, but under pytest 9.2 it cannot: it marks a group
by rewriting node ids, which pytest 9.2 no longer reads (pytest-dev/pytest-xdist#1386)."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# the fault tests: one MLflow server (about 10 s to start); they mostly wait on processes, so the other
# workers use the cores meanwhile
ONE_WORKER_MODULES = ("tests/fleet/test_faults.py",)


class SharedServersOnOneWorker(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return module if module in ONE_WORKER_MODULES else nodeid

    def remove_node(self, node: object) -> str | None:
        """A worker that stopped: its unfinished tests go to the others, except the one that was running
        when it crashed, which is reported (as `--dist load` does; xdist's scope scheduler would run it
        again, and a test that takes its worker down would take the next one down too)."""
        units = {
            scope: unit for scope, unit in self.assigned_work.get(node, {}).items() if not all(unit.values())
        }
        crashed = next((nodeid for unit in units.values() for nodeid, done in unit.items() if not done), None)
        for unit in units.values():
            if crashed in unit:
                unit[crashed] = True
        self.assigned_work[node] = {scope: unit for scope, unit in units.items() if not all(unit.values())}
        super().remove_node(node)
        return crashed
