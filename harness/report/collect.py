"""Operations on the trials frame (harness.tracking.study_runs): row labels from templates, the runs a part
keeps, the metrics it needs."""

from __future__ import annotations

from typing import Any

import pandas as pd

from harness.errors import HarnessError
from harness.tracking.metric_names import OBJECTIVE


def row_labels(frame: pd.DataFrame, template: str, where: str) -> list[str]:
    """Each run's label from a spec's template over its params (`{variant}`, `lambda{lambda}`)."""
    try:
        return [template.format(**row) for row in frame.to_dict("records")]
    except KeyError as exc:
        raise HarnessError(f"{where}: label uses {exc}, which is not a param of the runs") from None


def labelled_runs(frame: pd.DataFrame, template: str, wanted: list[str], where: str) -> dict[str, str]:
    """label -> run_id for the `wanted` labels, in their order; a label no run has is refused."""
    ids = dict(zip(row_labels(frame, template, where), frame["run_id"], strict=True))
    missing = [label for label in wanted if label not in ids]
    if missing:
        raise HarnessError(f"{where}: no run labelled {missing}; fix reports/<study>.yaml")
    return {label: ids[label] for label in wanted}


class MissingColumns(HarnessError):
    """A report part names metrics or params the runs lack (`missing`): their profile does not evaluate
    them (harness.report.build says which profile does), or a name in the spec is wrong."""

    def __init__(self, message: str, missing: list[str]) -> None:
        super().__init__(message)
        self.missing = missing


class NoRunMatches(HarnessError):
    """No run has the params a part's `where` names: the running profile runs none of those rows (a smoke
    profile's subset of the variants; harness.report.build says so), or the spec is wrong."""

    def __init__(self, message: str, where: dict[str, Any]) -> None:
        super().__init__(message)
        self.where = where


def require_columns(frame: pd.DataFrame, columns: list[str], part: str) -> None:
    """One line when the runs lack a metric or parameter a report part names (`part`: "table x",
    "figure y"): every table and figure checks through here."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MissingColumns(
            f"{part}: the runs have no {', '.join(missing)} (their profile does not evaluate it, or a name "
            "in reports/<study>.yaml is wrong)",
            missing,
        )


def filter_runs(frame: pd.DataFrame, where: dict[str, Any], name: str) -> pd.DataFrame:
    """The runs whose params match `where` (param -> value, or a list of accepted values); numbers match
    numerically (MLflow gives 1 back for a logged 1.0). No run left is an error naming the filter."""
    if not where:
        return frame
    keep = pd.Series(True, index=frame.index)
    for param, wanted in where.items():
        if param not in frame.columns:
            raise HarnessError(f"{name}: 'where' names {param!r}, which is not a param of the runs")
        accepted = wanted if isinstance(wanted, list) else [wanted]
        keep &= frame[param].map(lambda value, ok=accepted: any(same_value(value, a) for a in ok))
    if not keep.any():
        raise NoRunMatches(f"{name}: no run has {where}; fix 'where' in reports/<study>.yaml", where)
    return frame[keep].reset_index(drop=True)


def same_value(value: object, wanted: object) -> bool:
    if isinstance(value, int | float) and isinstance(wanted, int | float) and not isinstance(wanted, bool):
        return float(value) == float(wanted)
    return str(value) == str(wanted)


def varying_params(frame: pd.DataFrame) -> list[str]:
    """The params (undotted columns; metric names have a dot, but the trial's `objective`) whose value
    differs between trials."""
    skip = {"run_id", "trial", OBJECTIVE}
    return [c for c in frame.columns if c not in skip and "." not in c and frame[c].astype(str).nunique() > 1]
