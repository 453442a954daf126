"""`make mutants`: apply each declared mutant (mutants.yaml) alone to a copy of the package, run the tests
that cover its module, and print the score (mutants killed / mutants) and every survivor.

Each worker owns a copy of the checkout (without .git, .venv, .harness) in a scratch folder whose
parent links `../shared`, as the tests expect; a mutant is written into the copy, its tests run there with
`PYTHONPATH` on the copy (ahead of the editable install), and the file is put back. First every module's
tests run once unmutated: a test that fails without a mutant would count every mutant as killed, so the
run stops there. A mutant whose tests run past their limit (3x the unmutated time + 60 s) counts as
killed, as a hang is a failure the suite reports.

Exit status: 0 when every survivor is an accepted one (its `accepted:` reason in mutants.yaml, listed in
docs/mutation.md) and every accepted one still survives; 1 otherwise (a new survivor: a test is
missing; an accepted one killed: its acceptance is stale); 2 for a bad mutant list.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = Path(__file__).with_name("mutants.yaml")
# the checkout but what is local to this machine: tests read studies/, reports/, README.md, bench/, ...
NOT_COPIED = {".git", ".venv", ".harness", ".pytest_cache", ".ruff_cache", "harness.egg-info"}


class MutantListError(Exception):
    """mutants.yaml names a file, a test or a text that is not there."""


@dataclass(frozen=True)
class Mutant:
    """One small bug: `original` (found exactly once in `module`) replaced by `mutated`."""

    module: str
    tests: tuple[str, ...]
    bug: str
    original: str
    mutated: str
    accepted: str | None = None  # why it may survive (equivalent, or outside what the tests can see)

    @property
    def name(self) -> str:
        return f"{self.module}: {self.bug}"


@dataclass
class Outcome:
    mutant: Mutant
    killed: bool
    seconds: float
    detail: str = ""  # the failing test, or "timeout"


def load_mutants(path: Path = MUTANTS, root: Path = ROOT) -> list[Mutant]:
    """The declared mutants, each checked against the code: its module and tests exist, its original
    text occurs exactly once and differs from the mutated text."""
    spec = yaml.safe_load(path.read_text())
    mutants = []
    for module, entry in spec["modules"].items():
        source = root / module
        if not source.is_file():
            raise MutantListError(f"{path.name}: module {module} does not exist; fix or remove its entry")
        tests = tuple(entry["tests"])
        for test in tests:
            if not (root / test.split("::")[0]).exists():
                raise MutantListError(f"{path.name}: {module}: test {test} does not exist")
        text = source.read_text()
        for item in entry["mutants"]:
            mutant = Mutant(module, tests, item["bug"], item["from"], item["to"], item.get("accepted"))
            found = text.count(mutant.original)
            if found != 1 or mutant.original == mutant.mutated:
                why = "is the same as its mutation" if found == 1 else f"occurs {found} times (must be 1)"
                raise MutantListError(
                    f"{path.name}: {mutant.name}: the text {mutant.original!r} {why}; "
                    "update the mutant to the code"
                )
            mutants.append(mutant)
    return mutants


def make_workspaces(scratch: Path, jobs: int) -> list[Path]:
    """`jobs` copies of the checkout (package, tests, studies, ...), beside a link to ../shared."""
    (scratch / "shared").symlink_to((ROOT.parent / "shared").resolve())
    copies = []
    for job in range(jobs):
        copy = scratch / f"w{job}"
        shutil.copytree(ROOT, copy, symlinks=True, ignore=lambda folder, names: _local(Path(folder), names))
        copies.append(copy)
    return copies


def _local(folder: Path, names: list[str]) -> set[str]:
    return set(names) & NOT_COPIED if folder == ROOT else set()


@contextlib.contextmanager
def applied(copy: Path, mutant: Mutant) -> Iterator[None]:
    """The mutant written into `copy`, then the original put back with its times, so the copied
    bytecode of the original stays valid (runs write none: PYTHONDONTWRITEBYTECODE)."""
    path = copy / mutant.module
    original, stat = path.read_text(), path.stat()
    path.write_text(original.replace(mutant.original, mutant.mutated, 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 60 * 10**9))  # never the original's pyc
    try:
        yield
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def run_tests(copy: Path, tests: tuple[str, ...], threads: int, limit: float | None) -> tuple[bool, str]:
    """(whether `tests` pass in `copy`, the first failing test or "timeout")."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    for pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "HARNESS_THREADS"):
        env[pool] = str(threads)
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-n", "0", "-p", "no:cacheprovider",
               "-o", "addopts=", "--no-header", "-rf", *tests]  # fmt: skip
    try:
        done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return False, "timeout"
    lines = done.stdout.strip().splitlines()
    failed = [line.removeprefix("FAILED ") for line in lines if line.startswith("FAILED")]
    if failed:
        return False, failed[0]
    return done.returncode == 0, lines[-1] if lines else f"exit {done.returncode}"


def in_parallel(copies: list[Path], work: list, run) -> Iterator:  # noqa: ANN001
    """`run(copy, item)` for each item, each copy used by one call at a time; results in `work`'s order."""
    free: queue.Queue[Path] = queue.Queue()
    for copy in copies:
        free.put(copy)

    def one(item: object) -> object:
        copy = free.get()
        try:
            return run(copy, item)
        finally:
            free.put(copy)

    with ThreadPoolExecutor(len(copies)) as pool:
        yield from pool.map(one, work)


def baseline(copies: list[Path], mutants: list[Mutant], threads: int) -> dict[tuple[str, ...], float]:
    """Each test selection's unmutated run time; exits 1 when one fails without a mutant."""
    selections = list(dict.fromkeys(m.tests for m in mutants))

    def run(copy: Path, tests: tuple[str, ...]) -> tuple[tuple[str, ...], float, bool, str]:
        start = time.perf_counter()
        passed, detail = run_tests(copy, tests, threads, None)
        return tests, time.perf_counter() - start, passed, detail

    seconds = {}
    for tests, took, passed, detail in in_parallel(copies, selections, run):
        if not passed:
            sys.exit(f"mutants: {' '.join(tests)} fail without any mutant ({detail}); fix them first")
        seconds[tests] = took
    return seconds


def summary(outcomes: list[Outcome]) -> tuple[str, int]:
    """The printed score per module and in all, the survivors, and the exit status."""
    lines, status = [], 0
    modules = list(dict.fromkeys(o.mutant.module for o in outcomes))
    width = max(map(len, modules))
    for module in modules:
        mine = [o for o in outcomes if o.mutant.module == module]
        killed = sum(o.killed for o in mine)
        lines.append(f"  {module:<{width}}  {killed:>3} of {len(mine):>3} killed")
    killed = sum(o.killed for o in outcomes)
    share = 100 * killed / len(outcomes)
    lines.append(f"score: {killed} of {len(outcomes)} mutants killed ({share:.1f}%)")
    for o in outcomes:
        if not o.killed:
            why = o.mutant.accepted or "NOT ACCEPTED: a test is missing (or add `accepted:` with the reason)"
            lines.append(f"survived  {o.mutant.name}\n          {why}")
            status |= o.mutant.accepted is None
        elif o.mutant.accepted:
            lines.append(f"killed, but listed as accepted (remove `accepted:`): {o.mutant.name}")
            status = 1
    return "\n".join(lines), status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                        help="mutants tested at once (default: the cores, at most 4)")  # fmt: skip
    parser.add_argument("--only", default="", help="only those whose module or bug names one of these: a,b")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    args = parser.parse_args(argv)
    try:
        mutants = [m for m in load_mutants() if any(part in m.name for part in args.only.split(","))]
    except (MutantListError, KeyError, yaml.YAMLError) as error:
        print(f"mutants: {error}", file=sys.stderr)
        return 2
    if args.list or not mutants:
        print("\n".join(m.name for m in mutants) or f"no mutant matches --only {args.only!r}")
        return 0
    from tqdm import tqdm

    jobs = min(args.jobs, len(mutants))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="harness-mutants-") as scratch:
        copies = make_workspaces(Path(scratch), jobs)
        print(f"mutants: {len(mutants)} over {len({m.module for m in mutants})} modules, {jobs} at a time")
        seconds = baseline(copies, mutants, threads)

        def run(copy: Path, mutant: Mutant) -> Outcome:
            began = time.perf_counter()
            with applied(copy, mutant):
                passed, detail = run_tests(copy, mutant.tests, threads, 3 * seconds[mutant.tests] + 60)
            return Outcome(mutant, not passed, time.perf_counter() - began, detail)

        outcomes = list(tqdm(in_parallel(copies, mutants, run), total=len(mutants), desc="mutants"))
    text, status = summary(outcomes)
    print(text)
    print(f"took {(time.perf_counter() - start) / 60:.1f} min")
    if args.json:
        rows = [{**asdict(o.mutant), "killed": o.killed, "seconds": round(o.seconds, 1), "detail": o.detail}
                for o in outcomes]  # fmt: skip
        args.json.write_text(json.dumps(rows, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
