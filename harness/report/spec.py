"""Report specs: `reports/<study>.yaml` says which tables and figures a study's report holds."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError
from harness.evaluate.registry import aggregates

REPORTS_DIR = Path(__file__).resolve().parents[2] / "reports"


class GridSpec(BaseModel):
    """One metric over two parameters: `rows` x `columns`."""

    model_config = ConfigDict(extra="forbid")
    name: str
    rows: str
    columns: str
    metric: str


class GridTable(GridSpec):
    kind: Literal["grid"]
    caption: str = ""


class RunsTable(BaseModel):
    """One row per label (runs sharing a label, e.g. seeds, are averaged: mean +- std, n), one column per
    metric; `reference` rows print the paper's own numbers under the harness's, with the difference, and
    give the rows the paper's order."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["runs"]
    label: str = Field(description="row label template over params, e.g. '{method}-lambda{lambda}'")
    columns: dict[str, str] = Field(description="column header -> MLflow metric")
    digits: int = Field(2, ge=0, le=6)
    caption: str = ""
    reference: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="row label -> {column header: the paper's value}, transcribed from the paper",
    )
    reference_source: str = Field("paper", description="how reference rows are labelled, e.g. 'Chen'")

    @model_validator(mode="after")
    def _reference_columns_exist(self) -> RunsTable:
        for label, values in self.reference.items():
            unknown = sorted(set(values) - set(self.columns))
            if unknown:
                raise ValueError(f"reference row {label!r} names columns {unknown} the table does not have")
        return self


class ErrorsTable(BaseModel):
    """Error analysis (Phillips Tables 2-3): the `top` STS dev pairs scored worst, or SST dev sentences
    misclassified most confidently, by the first of `runs` (labels), every run's prediction beside them."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["errors"]
    task: Literal["sts", "sst"]
    label: str = Field(description="row label template over params, e.g. '{variant}'")
    runs: list[str] = Field(min_length=1, description="labels of the runs compared; the first picks the rows")
    top: int = Field(10, gt=0)
    caption: str = ""


class Heatmap(GridSpec):
    kind: Literal["heatmap"]
    title: str = ""


class Curve(BaseModel):
    """A metric's history during training, one line per label (runs sharing a label, e.g. seeds: their
    mean, the spread shaded), against the step or, with `x: epoch`, the epoch (Chen Fig. 2)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["curve"]
    metric: str = Field(description="a step metric, e.g. dev.overall")
    label: str = Field(description="line label template over params, e.g. '{variant}'")
    x: Literal["step", "epoch"] = "step"
    title: str = ""


class Projection(BaseModel):
    """SST dev embeddings of the named runs (saved with `save_embeddings: true`) in 2-D, coloured by the
    sentiment label, one panel per run (Phillips Fig. 3): UMAP where `umap-learn` is installed, else t-SNE."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["projection"]
    label: str = Field(description="label template over params, e.g. '{variant}'")
    runs: list[str] = Field(min_length=1, description="labels of the runs drawn, one panel each")
    title: str = ""


class ReportSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    study: str
    title: str
    paper: str = Field("Other studies", description="the reproduction book's section, e.g. 'Chen'")
    tables: list[GridTable | RunsTable | ErrorsTable] = Field(default_factory=list)
    figures: list[Heatmap | Curve | Projection] = Field(default_factory=list)


SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}  # as SimCSE's tables print them


def default_columns(aggregate: str = "STS.avg") -> dict[str, str]:
    """The members of an aggregate (as declared in the task registry) and the aggregate, as columns."""
    declared = aggregates()[aggregate]
    members = {SHORT_NAMES.get(t, t): f"{t}.{declared.score}" for t in declared.members}
    return {**members, "Avg.": aggregate}


def load_spec(study: str, metrics: list[str] | None = None) -> ReportSpec:
    """The study's spec, or a default table over the runs' STS scores (or, when they have none, their
    dev scores) when `reports/<study>.yaml` does not exist."""
    path = REPORTS_DIR / f"{study}.yaml"
    if not path.is_file():
        columns = default_columns()
        if metrics is not None and not set(columns.values()) <= set(metrics):
            columns = {m: m for m in sorted(metrics) if m.startswith("dev.") and not m.endswith(".best")}
        table = RunsTable(name="results", kind="runs", label="trial {trial}", columns=columns,
                          caption="Scores of each finished trial.")  # fmt: skip
        return ReportSpec(study=study, title=study, tables=[table])
    try:
        return ReportSpec.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise HarnessError(f"{path}: field '{'.'.join(map(str, first['loc']))}': {first['msg']}") from None
