"""Report specs: `reports/<study>.yaml` says which tables and figures a study's report holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError, read_utf8
from harness.evaluate.registry import aggregates

REPORTS_DIR = Path(__file__).resolve().parents[2] / "reports"


class Filtered(BaseModel):
    """A table or figure over some of the runs: `where` keeps the runs whose params have the given values
    (a value, or a list of accepted values), e.g. Liao Table 6 is the tau = 1.0 row of the lambda x tau
    grid: `where: {tau: 1.0}`."""

    model_config = ConfigDict(extra="forbid")
    where: dict[str, Any] = Field(default_factory=dict, description="param -> value or list of values")


class GridSpec(Filtered):
    """One metric over two parameters: `rows` x `columns`."""

    name: str
    rows: str
    columns: str
    metric: str


class Derived(BaseModel):
    """A row or column computed from others: `mean` of the named ones, or `difference` of two (a - b)."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["mean", "difference"]
    of: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _two_for_a_difference(self) -> Derived:
        if self.op == "difference" and len(self.of) != 2:
            raise ValueError(f"a difference takes two names (a - b), got {self.of}")
        return self


class GridTable(GridSpec):
    """The grid as a table, best cell in bold; `rename` shows values under other names (as text, e.g.
    "0.1" or "cosine"), `derived_rows` add means / differences of rows, `reference` prints the paper's
    values under a row (row -> {column: value}, both as shown) with the difference."""

    kind: Literal["grid"]
    caption: str = ""
    digits: int = Field(2, ge=0, le=6)
    rename: dict[str, str] = Field(default_factory=dict)
    derived_rows: dict[str, Derived] = Field(default_factory=dict)
    reference: dict[str, dict[str, float]] = Field(default_factory=dict)
    reference_source: str = "paper"


class RunsTable(Filtered):
    """One row per label (runs sharing a label, e.g. seeds, are averaged: mean +- std, n), one column per
    metric; `reference` rows print the paper's own numbers under the harness's, with the difference, and
    give the rows the paper's order. `rows` picks labels and their order; `derived_columns` /
    `derived_rows` add means or differences of others (David et al. Table 9's "Difference" row);
    `transpose` prints the metrics as rows and the labels as columns (David et al.'s layout)."""

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
    same_setup: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict,
        description="row label -> {where else the paper reports this setup, e.g. 'Chen Table 2 (baseline)': "
        "{column: value}}: the paper's own spread for one configuration, printed as a range under the row",
    )
    rename: dict[str, str] = Field(
        default_factory=dict,
        description="label -> shown label; runs renamed alike share a row (Chen Table 2's "
        "single-task row: three runs, one per task)",
    )
    rows: list[str] | None = Field(None, description="the labels shown, in this order (default: all)")
    derived_columns: dict[str, Derived] = Field(default_factory=dict, description="header -> op over headers")
    derived_rows: dict[str, Derived] = Field(default_factory=dict, description="label -> op over labels")
    transpose: bool = Field(False, description="metrics as rows, labels as columns")

    @model_validator(mode="after")
    def _names_exist(self) -> RunsTable:
        headers = set(self.columns) | set(self.derived_columns)
        for label, values in self.reference.items():
            unknown = sorted(set(values) - headers)
            if unknown:
                raise ValueError(f"reference row {label!r} names columns {unknown} the table does not have")
        for label, elsewhere in self.same_setup.items():
            if label not in self.reference:
                raise ValueError(
                    f"same_setup row {label!r} has no reference row; add the paper's values there"
                )
            for source, values in elsewhere.items():
                unknown = sorted(set(values) - headers)
                if unknown:
                    raise ValueError(
                        f"same_setup {label!r} ({source}) names columns {unknown} the table lacks"
                    )
        for header, derived in self.derived_columns.items():
            unknown = sorted(set(derived.of) - set(self.columns))
            if unknown:
                raise ValueError(f"derived column {header!r} uses {unknown}, which are not columns")
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
    pick: Literal["worst", "random_beyond"] = Field(
        "worst",
        description="worst: the `top` rows the first run gets most wrong; random_beyond (STS): `top` rows "
        "drawn at random (seed `seed`) among those whose |prediction - gold| exceeds `beyond` (Phillips 5.1)",
    )
    beyond: float | None = Field(None, gt=0, description="random_beyond's threshold on |prediction - gold|")
    seed: int = 0
    caption: str = ""

    @model_validator(mode="after")
    def _pick_needs_its_fields(self) -> ErrorsTable:
        if (self.pick == "random_beyond") != (self.beyond is not None):
            raise ValueError("pick: random_beyond needs 'beyond' (and only it uses it)")
        if self.pick == "random_beyond" and self.task != "sts":
            raise ValueError("pick: random_beyond applies to task: sts")
        return self


class Heatmap(GridSpec):
    kind: Literal["heatmap"]
    title: str = ""


class Curve(Filtered):
    """A metric's history during training, one line per label (runs sharing a label, e.g. seeds: their
    mean, the spread shaded), against the step or, with `x: epoch`, the epoch (Chen Fig. 2)."""

    name: str
    kind: Literal["curve"]
    metric: str = Field(description="a step metric, e.g. dev.overall")
    label: str = Field(description="line label template over params, e.g. '{variant}'")
    x: Literal["step", "epoch"] = "step"
    title: str = ""


class Line(Filtered):
    """A final metric against a parameter (`x`), one line per label (e.g. `tau {tau}`), seeds averaged and
    their spread shaded (Liao's lambda and tau ablations as lines; Chen Tables 8-9 over epochs)."""

    name: str
    kind: Literal["line"]
    x: str = Field(description="the param on the x axis, e.g. lambda")
    metric: str
    label: str = Field("", description="line label template over params; empty: one line")
    title: str = ""


class Bar(Filtered):
    """Grouped bars: one group per column (metric), one bar per label, seeds averaged with their std as
    error bars (David et al. Fig. 4). With `change`, pairs of labels [before, after]: one bar per column,
    the mean over pairs of after - before, the pairs' std as error bars (David et al. Fig. 5: the mean
    change from cosine to linear prediction functions over eight models)."""

    name: str
    kind: Literal["bar"]
    label: str = Field(description="bar label template over params, e.g. '{variant}'")
    columns: dict[str, str] = Field(description="group name -> MLflow metric")
    change: list[tuple[str, str]] | None = Field(None, description="[before, after] label pairs")
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
    requires: str = Field(
        "", description="what the paper profile needs that is not offline (printed with the report)"
    )
    tables: list[GridTable | RunsTable | ErrorsTable] = Field(default_factory=list)
    figures: list[Heatmap | Curve | Line | Bar | Projection] = Field(default_factory=list)


SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}  # as SimCSE's tables print them


def default_columns(aggregate: str = "STS.avg") -> dict[str, str]:
    """The members of an aggregate (as declared in the task registry) and the aggregate, as columns."""
    declared = aggregates()[aggregate]
    members = {SHORT_NAMES.get(t, t): f"{t}.{declared.score}" for t in declared.members}
    return {**members, "Avg.": aggregate}


def default_spec(study: str, metrics: list[str], varying: list[str]) -> ReportSpec:
    """A study without `reports/<study>.yaml` (a researcher's own): one row per trial labelled by the params
    that differ between trials, and as columns the final STS scores the runs have (STS12-16, STS-B, SICK-R,
    Avg.), else their dev scores, with the best dev score (the objective) first."""
    columns = {name: metric for name, metric in default_columns().items() if metric in metrics}
    dev = {_dev_name(m): m for m in sorted(metrics) if m.startswith("dev.") and m.endswith(".best")}
    if not columns:
        dev = {_dev_name(m): m for m in sorted(metrics) if m.startswith("dev.") and not m.endswith(".best")}
    label = ", ".join(f"{name} = {{{name}}}" for name in varying) or "trial {trial}"
    caption = (
        "Scores of each finished trial (x 100): the best dev score (the objective), then the final tasks."
    )
    table = RunsTable(name="results", kind="runs", label=label, columns={**dev, **columns}, caption=caption)
    return ReportSpec(study=study, title=study, tables=[table])


def _dev_name(metric: str) -> str:
    """`dev.STSBenchmark.spearman.best` -> `STS-B dev spearman (best)`."""
    name = metric.removeprefix("dev.")
    best = name.endswith(".best")
    task, _, score = name.removesuffix(".best").partition(".")
    return f"{SHORT_NAMES.get(task, task)} dev {score}".strip() + (" (best)" if best else "")


def load_spec(study: str, metrics: list[str] | None = None, varying: list[str] | None = None) -> ReportSpec:
    """The study's spec (`reports/<study>.yaml`), or `default_spec` over the runs' `metrics` and the params
    that vary between them."""
    path = REPORTS_DIR / f"{study}.yaml"
    if not path.is_file():
        return default_spec(study, metrics or [], varying or [])
    try:
        return ReportSpec.model_validate(yaml.safe_load(read_utf8(path)))
    except yaml.YAMLError as exc:
        raise HarnessError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise HarnessError(f"{path}: field '{'.'.join(map(str, first['loc']))}': {first['msg']}") from None
