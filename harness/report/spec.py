"""Report specs: `reports/<study>.yaml` says which tables and figures a study's report holds; each part's
fields and drawing are its kind's (harness/report/parts/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from harness.config import one_line_error
from harness.errors import HarnessError
from harness.evaluate.registry import aggregates
from harness.report.claim_spec import Claim, UndecidableClaim
from harness.report.names import SHORT_NAMES
from harness.report.parts.base import ReportPart, part_of
from harness.stats.equivalence import DEFAULT_MARGIN, Margins
from harness.yaml_input import read_yaml

REPORTS_DIR = Path(__file__).resolve().parents[2] / "reports"


class ReportSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    study: str
    title: str
    paper: str = Field("Other studies", description="the reproduction book's section, e.g. 'Chen'")
    requires: str = Field(
        "", description="what the paper profile needs that is not offline (printed with the report)"
    )
    tables: list[ReportPart] = Field(default_factory=list, description="table parts, by kind")
    figures: list[ReportPart] = Field(default_factory=list, description="figure parts, by kind")
    claims: list[Claim] = Field(
        default_factory=list, description="the paper's claims on its ablations (harness.report.claim_spec)"
    )
    undecidable: list[UndecidableClaim] = Field(
        default_factory=list, description="the paper's claims its tables cannot decide, with why"
    )
    equivalence_margin: float | dict[str, float] = Field(
        DEFAULT_MARGIN,
        description="the margin (points) within which a harness number reproduces the paper's (TOST, "
        "harness.stats.equivalence): one number, or metric -> margin with an optional 'default'",
    )

    @field_validator("equivalence_margin")
    @classmethod
    def _positive_margins(cls, value: float | dict[str, float]) -> float | dict[str, float]:
        values = value.values() if isinstance(value, dict) else [value]
        if any(v <= 0 for v in values):
            raise ValueError("equivalence margins are positive numbers of points, e.g. 2.0")
        return value

    def margins(self) -> Margins:
        """The stated equivalence margins."""
        if not isinstance(self.equivalence_margin, dict):
            return Margins(self.equivalence_margin)
        per = {k: v for k, v in self.equivalence_margin.items() if k != "default"}
        return Margins(self.equivalence_margin.get("default", DEFAULT_MARGIN), tuple(sorted(per.items())))

    @field_validator("tables", "figures", mode="before")
    @classmethod
    def _parts_by_kind(cls, items: Any, info: ValidationInfo) -> list[ReportPart]:
        """Each item validated by the class its `kind` names (harness/report/parts/)."""
        if not isinstance(items, list):
            raise ValueError(f"'{info.field_name}' is a list of parts")
        return [part_of(item, str(info.field_name)) for item in items]

    @field_validator("claims")
    @classmethod
    def _unique_ids(cls, claims: list[Claim]) -> list[Claim]:
        ids = [claim.id for claim in claims]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"claim ids must be unique; repeated: {', '.join(repeated)}")
        return claims


def default_columns(aggregate: str = "STS.avg") -> dict[str, str]:
    """The members of an aggregate (as declared in the task registry) and the aggregate, as columns."""
    declared = aggregates()[aggregate]
    members = {SHORT_NAMES.get(t, t): f"{t}.{declared.score}" for t in declared.members}
    return {**members, "Avg.": aggregate}


def default_spec(study: str, metrics: list[str], varying: list[str]) -> ReportSpec:
    """A study without `reports/<study>.yaml` (a researcher's own): one row per configuration labelled by
    the params that differ between trials (seeds averaged in one row), and as columns the final STS scores
    the runs have (STS12-16, STS-B, SICK-R, Avg.), else their dev scores, with the best dev score seen in
    training first."""
    columns = {name: metric for name, metric in default_columns().items() if metric in metrics}
    dev = {_dev_name(m): m for m in sorted(metrics) if m.startswith("dev.") and m.endswith(".best")}
    if not columns:
        dev = {_dev_name(m): m for m in sorted(metrics) if m.startswith("dev.") and not m.endswith(".best")}
    configuration = [name for name in varying if name != "seed"]  # a row's seeds share it: mean +- std
    label = ", ".join(f"{name} = {{{name}}}" for name in configuration)
    label = label or ("all seeds" if "seed" in varying else "trial {trial}")
    caption = (
        "Scores of each configuration (runs that differ only in their seed share a row: mean $\\pm$ std, n): "
        + ("the best dev score seen in training, then the final tasks" if columns else "the dev scores")
        + scale_note([*dev.values(), *columns.values()])
    )
    from harness.report.parts.runs_table import RunsTable

    table = RunsTable(name="results", kind="runs", label=label, columns={**dev, **columns}, caption=caption)
    return ReportSpec(study=study, title=study, tables=[table])


def scale_note(metrics: list[str]) -> str:
    """`; STS scores x 100.`: how the shown metrics are scaled, naming only the kinds they are (the
    registry's STS and SentEval tasks x 100; CS224N's dev scores, which are no registered task, as
    fractions)."""
    from harness.evaluate.registry import tasks

    kinds = {"sts": "STS", "classification": "SentEval"}
    known = tasks()
    found = []
    for metric in metrics:
        name = metric.removeprefix("dev.").removesuffix(".best")
        task = name.split(".")[0]
        if name in aggregates():  # STS.avg, STS12-16.wmean, transfer.avg: their members' scale
            task = aggregates()[name].members[0]
        kind = kinds.get(known[task].kind, "") if task in known else "CS224N"
        if kind and kind not in found:
            found.append(kind)
    hundred = [k for k in found if k != "CS224N"]
    parts = [f"{' and '.join(hundred)} scores x 100"] if hundred else []
    parts += ["CS224N scores as fractions"] if "CS224N" in found else []
    return f"; {', '.join(parts)}." if parts else "."


def _dev_name(metric: str) -> str:
    """`dev.STSBenchmark.spearman.best` -> `STS-B dev spearman (best)`."""
    name = metric.removeprefix("dev.")
    best = name.endswith(".best")
    task, _, score = name.removesuffix(".best").partition(".")
    return f"{SHORT_NAMES.get(task, task)} dev {score}".strip() + (" (best)" if best else "")


def spec_beside(study: str, study_path: Path) -> Path:
    """A study's report spec kept beside its YAML (a study outside studies/): `<study>.report.yaml`."""
    return study_path.with_name(f"{study}.report.yaml")


def load_spec(
    study: str,
    metrics: list[str] | None = None,
    varying: list[str] | None = None,
    study_path: str | None = None,
) -> ReportSpec:
    """The study's spec: `reports/<study>.yaml`, else `<study>.report.yaml` beside its YAML (`study_path`,
    as its runs recorded it), else `default_spec` over the runs' `metrics` and the params that vary
    between them."""
    path = REPORTS_DIR / f"{study}.yaml"
    if not path.is_file() and study_path:
        path = spec_beside(study, Path(study_path))
    if not path.is_file():
        return default_spec(study, metrics or [], varying or [])
    raw = read_yaml(path)
    for section in ("tables", "figures") if isinstance(raw, dict) else ():
        _check_parts(raw.get(section), section, path)
    try:
        return ReportSpec.model_validate(raw)
    except ValidationError as exc:
        raise one_line_error(exc, str(path), ReportSpec) from None


def _check_parts(items: Any, section: str, path: Path) -> None:
    """Each part validated by its kind's class on its own, so that an error names the part (`tables[2]`)
    and the fields of its kind; within the spec, pydantic would report it at `tables`, lost in the list."""
    for index, item in enumerate(items if isinstance(items, list) else []):
        try:
            part_of(item, section)
        except ValidationError as exc:
            raise one_line_error(exc, f"{path}: {section}[{index}]") from None
        except ValueError as exc:
            raise HarnessError(f"{path}: {section}[{index}]: {exc}") from None
