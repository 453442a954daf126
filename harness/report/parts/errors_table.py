"""`kind: errors`: error analysis, the dev examples a run gets most wrong (Phillips Tables 2-3)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from harness.report.parts.base import PartContext, TablePart, register_part


@register_part("errors")
class ErrorsTable(TablePart):
    """Error analysis (Phillips Tables 2-3): the `top` STS dev pairs scored worst, or SST dev sentences
    misclassified most confidently, by the first of `runs` (labels), every run's prediction beside them."""

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

    def latex(self, ctx: PartContext) -> str:
        from harness.report.errors import errors_latex

        return errors_latex(ctx.tracker, ctx.frame, self)
