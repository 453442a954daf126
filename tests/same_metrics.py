"""The refactoring guard (issue 24): every run's final metrics in two trees of test stores, compared
bit for bit. Run the every-study test twice, before and after a change, on the same seeds and threads:

    .venv/bin/pytest -q -n 3 tests/test_every_study.py --basetemp=/tmp/before   # then change the code
    .venv/bin/pytest -q -n 3 tests/test_every_study.py --basetemp=/tmp/after
    .venv/bin/python -m tests.same_metrics /tmp/before /tmp/after

(-n 3 on any machine gives each worker the same thread count, HARNESS_THREADS, on both sides only if
the core count is the same: run both on one machine.) A run is named by its test's study (its report),
own study, trial number and variant; metrics are compared as the floats MLflow stored. Exit 1 on any
difference, listing each.

`--within bf16` compares a run of another arithmetic (the compiled training step, issue 54:
`SAME_METRICS_COMPILE=1` makes the every-study test's runs `compile: true`) within bf16's precision:
|a - b| <= 2^-8 max(|a|, |b|) (bf16 keeps 8 significant bits), or 1e-3 absolute for values near 0."""

from __future__ import annotations

import math
import sqlite3
import sys
from collections.abc import Callable
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


def bf16_close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=2**-8, abs_tol=1e-3)


def differences(before: Path, after: Path, close: Callable[[float, float], bool] | None = None) -> list[str]:
    a, b = final_metrics(before), final_metrics(after)
    lines = [f"only in {before}: {key}" for key in sorted(a.keys() - b.keys())]
    lines += [f"only in {after}: {key}" for key in sorted(b.keys() - a.keys())]
    for key in sorted(a.keys() & b.keys()):
        for metric in sorted(a[key].keys() | b[key].keys()):
            if "seconds" in metric or metric.startswith("time."):
                continue  # durations differ from run to run
            x, y = a[key].get(metric), b[key].get(metric)
            if x != y and not (x != x and y != y):  # NaN equals NaN here
                if close is not None and x is not None and y is not None and close(x, y):
                    continue
                lines.append(f"{key} {metric}: {x!r} -> {y!r}")
    return lines


if __name__ == "__main__":
    within = "--within" in sys.argv and sys.argv[sys.argv.index("--within") + 1] == "bf16"
    before, after = (Path(a) for a in sys.argv[1:3])
    found = differences(before, after, bf16_close if within else None)
    runs, compared = len(final_metrics(before)), "within bf16 precision" if within else "bit for bit"
    print("\n".join(found) if found else f"identical: {runs} trial runs, every final metric {compared}")
    sys.exit(1 if found else 0)
