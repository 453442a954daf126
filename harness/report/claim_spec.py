"""A paper's claims about its ablations, as `claims:` in `reports/<study>.yaml`: each transcribed from the
paper with its section, and written as a comparison the runs can check (harness.report.verdicts).

    claims:
      - id: lambda0.3_beats_lambda0.1          # unique in the spec
        source: Liao 4.4, Table 6               # where the paper says it
        text: "lambda = 0.3 gives the best STS average"   # the paper's statement, in its words
        metric: STS12-16.wmean                  # a metric of the runs (harness name)
        better: {lambda: 0.3, tau: 1.0}         # the row claimed better: run params (seeds: every one)
        worse: {lambda: 0.1, tau: 1.0}          # the row claimed worse
        paper: [70.44, 69.18]                   # the paper's values of the two rows, as printed
        # worse_study: chen_supervised          # a row of another study of the same store (optional)

      - id: lambda0.3_best
        kind: best                              # "best of a grid": the claimed cell beats every other
        source: Liao 4.4, Table 6
        text: ...
        metric: STS12-16.wmean
        among: {tau: 1.0}                       # the runs compared (default: all)
        by: [lambda]                            # the params whose values make a cell
        best: {lambda: 0.3}                     # the claimed best cell
        paper: 70.44                            # the paper's value of that cell

      - id: lambda_decreases_transfer
        kind: trend                             # "the metric rises (falls) along a param": every step
        source: Liao 5.1, Table 4
        text: "Increasing lambda tends to decrease the model performance."
        metric: transfer.avg
        among: {tau: 1.0}
        by: lambda                              # one param; its cells in the order of its values
        direction: decreasing                   # or increasing

      - id: sts_gains_most                     # "the largest gain is on STS": one pair's difference
        kind: gain                              #   beyond another's (the same or another metric)
        source: Phillips 4.4, Table 1
        text: "The task with the greatest magnitude of improvement from pretraining is STS"
        metric: dev.sts.pearson
        better: {variant: supervised}
        worse: {variant: finetune}
        than: {metric: dev.sst.acc, better: {variant: supervised}, worse: {variant: finetune}}
        paper: [[0.738, 0.670], [0.520, 0.490]]  # [[better, worse], [than's better, than's worse]]

      - id: nli_as_quora                        # "no substantial difference": equivalent within the
        kind: equivalent                        #   report's stated margin (two one-sided tests)
        source: Chen 6.3, Table 5
        text: "there is no substantial difference in model performance between Quora and NLI datasets"
        metric: dev.overall
        better: {variant: nli}                  # the two rows (no direction)
        worse: {variant: 3_given}
        paper: [0.661, 0.664]

A row is every run whose params match (values compare as numbers where both are; a list accepts any of
its values); runs that differ only in `seed` are one row's seeds. A row that matches runs of several
configurations is refused, naming the params that split it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from harness.errors import HarnessError
from harness.report.collect import filter_runs, same_value, varying_params

SEED = "seed"
OTHER_STUDY = ("the study of the same store whose runs `{row}` names (default: this one); rows of two "
               "studies pair where their items match")  # fmt: skip


class _Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[A-Za-z0-9_.=-]+$")
    source: str = Field(min_length=1, description="the paper's section / table, e.g. 'Liao 4.4, Table 6'")
    text: str = Field(min_length=1, description="the paper's statement")
    metric: str = Field(description="the metric compared (harness name, e.g. STS12-16.wmean)")


class CompareClaim(_Claim):
    """`better` beats `worse` on `metric` (higher is better for every score the harness reports)."""

    kind: Literal["compare"] = "compare"
    better: dict[str, Any] = Field(min_length=1)
    worse: dict[str, Any] = Field(min_length=1)
    paper: tuple[float, float] | None = Field(None, description="the paper's values: [better, worse]")
    better_study: str | None = Field(None, description=OTHER_STUDY.format(row="better"))
    worse_study: str | None = Field(None, description=OTHER_STUDY.format(row="worse"))

    @property
    def paper_difference(self) -> float | None:
        return None if self.paper is None else self.paper[0] - self.paper[1]

    def rows(self) -> dict[str, dict[str, Any]]:
        return {"better": self.better, "worse": self.worse}


class BestClaim(_Claim):
    """The cell `best` (values of `by`) beats every other cell of `among` on `metric`."""

    kind: Literal["best"]
    among: dict[str, Any] = Field(default_factory=dict)
    by: list[str] = Field(min_length=1)
    best: dict[str, Any] = Field(min_length=1)
    paper: float | None = Field(None, description="the paper's value of the claimed best cell")

    @model_validator(mode="after")
    def _best_names_the_cell(self) -> BestClaim:
        if set(self.best) != set(self.by):
            raise ValueError(f"claim {self.id}: 'best' gives a value of each of 'by' ({', '.join(self.by)})")
        return self

    @property
    def paper_difference(self) -> float | None:
        return None


class Pair(BaseModel):
    """Two rows and a metric: the `than` of a gain claim (rows of other studies as in `CompareClaim`)."""

    model_config = ConfigDict(extra="forbid")
    metric: str
    better: dict[str, Any] = Field(min_length=1)
    worse: dict[str, Any] = Field(min_length=1)
    better_study: str | None = None
    worse_study: str | None = None


class GainClaim(CompareClaim):
    """`better` - `worse` on `metric` is larger than `than`'s difference (a "largest gain" claim): judged
    as the difference of the two paired differences."""

    kind: Literal["gain"]  # type: ignore[assignment]
    than: Pair
    paper: tuple[tuple[float, float], tuple[float, float]] | None = Field(  # type: ignore[assignment]
        None, description="the paper's values: [[better, worse], [than's better, than's worse]]"
    )

    @property
    def paper_difference(self) -> float | None:
        if self.paper is None:
            return None
        (a, b), (c, d) = self.paper
        return (a - b) - (c - d)


class EquivalentClaim(CompareClaim):
    """No substantial difference between `better` and `worse` on `metric`: holds when the two are
    equivalent within the report's stated margin by two one-sided tests (harness.stats.equivalence);
    `better` and `worse` only name the two rows."""

    kind: Literal["equivalent"]  # type: ignore[assignment]


class TrendClaim(_Claim):
    """`metric` rises (`increasing`) or falls along the values of the param `by` within `among`: every
    step between neighbouring values in the claimed direction (judged as that many comparisons, each
    "the later beats the earlier" or the reverse)."""

    kind: Literal["trend"]
    among: dict[str, Any] = Field(default_factory=dict)
    by: str
    direction: Literal["increasing", "decreasing"]

    @property
    def paper_difference(self) -> float | None:
        return None


class UndecidableClaim(BaseModel):
    """A claim of the paper that its tables cannot decide, and why (listed on the paper's book page)."""

    model_config = ConfigDict(extra="forbid")
    source: str = Field(min_length=1)
    text: str = Field(min_length=1, description="the paper's statement")
    why: str = Field(min_length=1, description="why no table of the paper decides it")


def _kind(value: Any) -> str:
    """A claim's kind: `compare` unless it says another (`best`, `trend`, `gain`, `equivalent`)."""
    return str(value.get("kind", "compare") if isinstance(value, dict) else getattr(value, "kind", "compare"))


Claim = Annotated[
    Annotated[CompareClaim, Tag("compare")]
    | Annotated[BestClaim, Tag("best")]
    | Annotated[TrendClaim, Tag("trend")]
    | Annotated[GainClaim, Tag("gain")]
    | Annotated[EquivalentClaim, Tag("equivalent")],
    Discriminator(_kind),
]


def _config_columns(frame: pd.DataFrame) -> list[str]:
    """The params that tell configurations apart: those that vary, but `seed`."""
    return [c for c in varying_params(frame) if c != SEED]


def row_runs(frame: pd.DataFrame, where: dict[str, Any], name: str) -> pd.DataFrame:
    """The runs of one row: those matching `where`, one configuration, sorted by seed (empty: no run)."""
    try:
        runs = filter_runs(frame, where, name)
    except HarnessError as exc:
        if "no run has" in str(exc):
            return frame.iloc[0:0]
        raise
    split = [c for c in _config_columns(runs)]
    if split:
        raise HarnessError(
            f"{name}: {where} matches runs of several configurations (they differ in {', '.join(split)}); "
            "add those params to the claim in reports/<study>.yaml"
        )
    return runs.sort_values(SEED) if SEED in runs.columns else runs


def cells(frame: pd.DataFrame, claim: BestClaim | TrendClaim) -> dict[tuple, pd.DataFrame]:
    """A best-of-grid or trend claim's cells: the runs of `among`, by their values of `by` (each one row),
    in the order of those values."""
    name = f"claim {claim.id}"
    try:
        runs = filter_runs(frame, claim.among, name)
    except HarnessError as exc:
        if "no run has" in str(exc):
            return {}
        raise
    by = claim_by(claim)
    missing = [p for p in by if p not in runs.columns]
    if missing:
        raise HarnessError(f"{name}: 'by' names {missing}, which are not params of the runs")
    out = {}
    for key, group in runs.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        out[key] = row_runs(group, {}, name)
    return out


def claim_by(claim: BestClaim | TrendClaim) -> list[str]:
    """The params whose values make a claim's cells."""
    return [claim.by] if isinstance(claim.by, str) else list(claim.by)


def is_best_cell(key: tuple, claim: BestClaim) -> bool:
    """Whether a cell's values of `by` are the claimed best's."""
    return all(same_value(value, claim.best[param]) for param, value in zip(claim.by, key, strict=True))
