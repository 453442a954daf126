"""The refactoring guard (issue 24): every run's final metrics in two trees of test stores, compared
bit for bit. Run the every-study test twice, before and after a change, on the same seeds and threads:

    .venv/bin/pytest -q -n 3 tests/test_every_study.py --basetemp=/tmp/before   # then change the code
    .venv/bin/pytest -q -n 3 tests/test_every_study.py --basetemp=/tmp/after
    .venv/bin/python -m tests.same_metrics /tmp/before /tmp/after

(-n 3 on any machine gives each worker the same thread count, HARNESS_THREADS, on both sides only if
the core count is the same: run both on one machine.) A run is named by its test's study (its report),
own study, trial number and variant; metrics are compared as the floats MLflow stored. Exit 1 on any
difference, listing each."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path


def final_metrics(base: Path) -> dict[tuple[str, ...], dict[str, float]]:
    """(test folder, study, trial tag, variant tag) -> {metric: latest value} for every FINISHED run."""
    found: dict[tuple[str, ...], dict[str, float]] = {}
    for db in sorted(base.glob("*/*/.harness/mlflow.db")):
        if db.parent.parent.is_symlink():  # pytest's `<name>current` link to the last folder
            continue
        reports = sorted((db.parent.parent / "reports").glob("*"))  # the test's own study: its report
        # pytest numbers its folders in the order a worker ran them: the name without the number
        test = reports[0].name if reports else db.parent.parent.name.rstrip("0123456789")
        with sqlite3.connect(db) as con:
            rows = con.execute(
                "SELECT e.name, r.run_uuid, "
                "(SELECT value FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = 'trial'), "
                "(SELECT value FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = 'variant'), "
                "(SELECT value FROM tags t WHERE t.run_uuid = r.run_uuid AND t.key = 'harness.role') "
                "FROM runs r JOIN experiments e ON e.experiment_id = r.experiment_id "
                "WHERE r.status = 'FINISHED'"
            ).fetchall()
            for study, run, trial, variant, role in rows:
                if role != "trial":
                    continue
                metrics = dict(
                    con.execute("SELECT key, value FROM latest_metrics WHERE run_uuid = ?", (run,))
                )
                found[(test, study, str(trial), str(variant))] = metrics
    return found


def differences(before: Path, after: Path) -> list[str]:
    a, b = final_metrics(before), final_metrics(after)
    lines = [f"only in {before}: {key}" for key in sorted(a.keys() - b.keys())]
    lines += [f"only in {after}: {key}" for key in sorted(b.keys() - a.keys())]
    for key in sorted(a.keys() & b.keys()):
        for metric in sorted(a[key].keys() | b[key].keys()):
            if "seconds" in metric or metric.startswith("time."):
                continue  # durations differ from run to run
            x, y = a[key].get(metric), b[key].get(metric)
            if x != y and not (x != x and y != y):  # NaN equals NaN here
                lines.append(f"{key} {metric}: {x!r} -> {y!r}")
    return lines


if __name__ == "__main__":
    before, after = Path(sys.argv[1]), Path(sys.argv[2])
    found = differences(before, after)
    runs = len(final_metrics(before))
    print("\n".join(found) if found else f"identical: {runs} trial runs, every final metric bit for bit")
    sys.exit(1 if found else 0)
