"""The report spec `harness new` writes beside a new study: the table `harness report` would build by
default (one row per configuration, the dev score and the final scores the method logs), with the grid's
first configuration as the baseline every other row is compared with, and a commented claim to copy. It
lives in reports/NAME.yaml for a study in studies/, else beside the study as NAME.report.yaml, where
`harness report` looks (harness.report.spec.load_spec)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from harness.report.collect import row_labels
from harness.report.parts.runs_table import RunsTable
from harness.report.spec import REPORTS_DIR, default_spec, spec_beside

CLAIMS = """\
# claims: statements on the rows that `harness report {name}` decides with their paired 95% interval
# (holds, reversed or inconclusive; claims.tex and the parent run's claims.json). Uncomment and edit:
# claims:
#   - id: {first_id}
#     source: my hypothesis
#     text: {better_text} beats {worse_text} on {metric}
#     metric: {metric}
#     better: {better}
#     worse: {worse}
# More kinds (the best of a grid, a gain, ...): harness/report/claim_spec.py, docs/statistics.md, and the
# paper studies' specs in reports/ (e.g. reports/lambda_tau_sweep.yaml).
"""


def report_spec_path(name: str, study_path: Path) -> Path:
    """Where the new study's report spec goes: reports/NAME.yaml for a study in studies/, else beside it."""
    from harness.resolve.study_spec import STUDIES_DIR

    if study_path.parent.resolve() == STUDIES_DIR.resolve():
        return REPORTS_DIR / f"{name}.yaml"
    return spec_beside(name, study_path)


def report_spec_yaml(name: str, base: dict[str, Any], search: dict[str, list[Any]]) -> str:
    """The spec's YAML: the default table of a study of `base` searching `search`, its first configuration
    the baseline, then the claims to copy."""
    from harness.resolve.run_spec import resolve_run

    metrics = list(resolve_run(base).plan.metrics)
    spec = default_spec(name, metrics, [*search, "seed"])
    table = spec.tables[0]
    assert isinstance(table, RunsTable)  # default_spec's one table
    first = {key: values[0] for key, values in search.items()}
    dumped = table.model_dump(include={"name", "kind", "label", "columns", "caption"})
    if first:
        dumped["baseline"] = row_labels(pd.DataFrame([first]), table.label, "the new report spec")[0]
    text = yaml.safe_dump({"study": name, "title": name, "tables": [dumped]}, sort_keys=False, width=100)
    header = (
        f"# The report of {name}: `harness report {name}` builds it from the runs in MLflow.\n"
        "# baseline: the row every other row is compared with (its paired difference and interval).\n"
    )
    metric = table.columns[list(table.columns)[-1]]
    key, values = next(iter(search.items()), ("seed", [1, 2]))
    better, worse = ({key: values[-1]}, {key: values[0]}) if len(values) > 1 else ({}, {})
    claims = CLAIMS.format(name=name, first_id=f"{key}_{values[-1]}_beats_{values[0]}".replace(".", "_"),
                           better_text=f"{key} {values[-1]}", worse_text=f"{key} {values[0]}", metric=metric,
                           better=_flow(better), worse=_flow(worse))  # fmt: skip
    return header + text + claims


def _flow(values: dict[str, Any]) -> str:
    return yaml.safe_dump(values, default_flow_style=True, width=1000).strip()
