"""What every report part (a table or a figure of `reports/<study>.yaml`) is: a pydantic model of its
fields, registered by its `kind` with `@register_part("kind")`, that writes its file and returns the
LaTeX that shows it. A new kind is one file in this package plus its import in `__init__.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from harness.report.evidence import Evidence
    from harness.report.setting import Setting
    from harness.tracking.tracker import Tracker

PARTS: Registry[type[ReportPart]] = Registry("report part kind", "harness.report.parts", "registered_kind",
                                             "see the README's report section")  # fmt: skip
register_part = PARTS.register


@dataclass
class PartContext:
    """What a part is written from: the study's finished trials (one row each, params and final metrics),
    the MLflow store for histories and artifacts, the folder written into (and `prefix`, that folder as
    the LaTeX document sees it), and the paper's setting where a table prints the paper's rows."""

    tracker: Tracker
    frame: pd.DataFrame
    folder: Path
    prefix: str
    setting: Setting | None
    evidence: Evidence | None = None  # the runs' item records (intervals); None: no statistics
    data_dir: str | None = None  # the data root for parts that print examples (`harness report --data-dir`)
    objectives: list[tuple[str, str]] = field(
        default_factory=list
    )  # a multi-objective study's (metric, direction)


class ReportPart(BaseModel):
    """A table or figure; `kind` names its class in the registry."""

    model_config = ConfigDict(extra="forbid")
    section: ClassVar[Literal["tables", "figures"]]
    registered_kind: ClassVar[str]
    name: str
    kind: str

    @model_validator(mode="after")
    def _kind_is_the_class(self) -> ReportPart:
        if self.kind != self.registered_kind:
            raise ValueError(f"kind {self.kind!r} given to a '{self.registered_kind}' part")
        return self

    def write(self, ctx: PartContext) -> str:
        """Write the part's file into `ctx.folder`; return the LaTeX that includes it."""
        raise NotImplementedError


class TablePart(ReportPart):
    """A table: `latex` renders it; it is written to `<name>.tex` and \\input."""

    section: ClassVar[Literal["tables", "figures"]] = "tables"

    def latex(self, ctx: PartContext) -> str:
        raise NotImplementedError

    def write(self, ctx: PartContext) -> str:
        (ctx.folder / f"{self.name}.tex").write_text(self.latex(ctx), encoding="utf-8")
        return f"\\input{{{ctx.prefix}{self.name}.tex}}"


class FigurePart(ReportPart):
    """A figure: `draw` saves it as `<name>.png`, shown in a float at 60% of the line width."""

    section: ClassVar[Literal["tables", "figures"]] = "figures"

    def draw(self, ctx: PartContext, path: Path) -> None:
        raise NotImplementedError

    def write(self, ctx: PartContext) -> str:
        self.draw(ctx, ctx.folder / f"{self.name}.png")
        graphic = f"\\includegraphics[width=0.6\\linewidth]{{{ctx.prefix}{self.name}.png}}"
        return f"\\begin{{figure}}[H]\\centering{graphic}\\end{{figure}}"


def part_of(item: Any, section: str) -> ReportPart:
    """A part from its YAML mapping: the class its `kind` names, which must belong in `section`."""
    if isinstance(item, ReportPart):
        return item
    if not isinstance(item, dict) or "kind" not in item:
        raise ValueError(f"each of {section} is a mapping with a 'kind' ({', '.join(kinds(section))})")
    try:
        cls = PARTS.get(str(item["kind"]))
    except Exception as exc:  # an unknown kind: the registry's message names the known ones
        raise ValueError(str(exc)) from None
    if cls.section != section:
        raise ValueError(f"kind {item['kind']!r} belongs in {cls.section}, not in {section}")
    return cls.model_validate(item)


def kinds(section: str) -> list[str]:
    return [name for name, cls in PARTS.entries().items() if cls.section == section]


class Filtered(BaseModel):
    """A table or figure over some of the runs: `where` keeps the runs whose params have the given values
    (a value, or a list of accepted values), e.g. Liao Table 6 is the tau = 1.0 row of the lambda x tau
    grid: `where: {tau: 1.0}`."""

    model_config = ConfigDict(extra="forbid")
    where: dict[str, Any] = Field(default_factory=dict, description="param -> value or list of values")


class Compared(BaseModel):
    """A table's statistics (harness.report.table_stats): each cell's 95% interval under its row (from
    the runs' item records; `intervals: false` leaves them out) and, with `baseline` (a row label as
    shown), a dagger on cells that differ from that row's beyond their paired interval (Holm)."""

    model_config = ConfigDict(extra="forbid")
    intervals: bool = Field(True, description="print each cell's 95% interval under its row")
    baseline: str | None = Field(None, description="the row others are compared with (a dagger if differing)")


class GridSpec(Filtered):
    """One metric over two parameters: `rows` x `columns`."""

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
