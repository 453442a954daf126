"""Scorers: how a trial is scored. A method names its scorer (`Method.scorer`). The scorer gives the
dev scores of each evaluation (`dev_scores()`), among them the target metric (`target_metric`,
`dev.<target>`): the dev score whose best so far is the trial's objective, the value Optuna optimises,
and that picks the best checkpoint; the final metrics (`final()`) and their per-item record (`items()`);
what it will score, worked out once per run (`scoring_of`: the run plan's `scoring`); and it checks its
evaluation data before a study starts (`preflight()`). A study may choose the target among the scorer's
`metric_choices` with the run field `objective_metric` (David et al. select on their own "overall",
`overall_r01`).

Words: a scorer scores; the objective is Optuna's value (the MLflow metric `objective`: the best target
metric so far); a study's `objectives` are the metrics of a multi-objective study.

A new scorer is one file in harness/scoring/ with a `Scorer` subclass decorated
`@register_scorer("name")`, and one import line in harness/scoring/__init__.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.errors import HarnessError
from harness.registry import Registry

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from harness.evaluate.suite import SentenceEncoder
    from harness.resolve.run_spec import ResolvedRun


DEV = "dev."  # the final metrics of a scorer scored on dev sets carry it (`dev.sst.acc`)


@dataclass(frozen=True)
class Scoring:
    """A scorer's part of a run's plan (harness.resolve.run_plan): what the run will score and log,
    worked out once from its settings. Names are the harness's (harness.tracking.metric_names)."""

    scorer: str  # the registered scorer that scores the run
    target: str  # the dev score Optuna optimises and the best checkpoint is chosen on (no `dev.`)
    dev_scores: tuple[str, ...]  # every dev score an evaluation logs under `dev.`, the target among them
    final_metrics: tuple[str, ...]  # what the final evaluation logs, sorted
    final_tasks: tuple[str, ...] = ()  # the tasks scored on embeddings at the end, in order (`sts`)
    transfer_tasks: tuple[str, ...] = ()  # among them, those a classifier probes (`harness plan` times them)

    @property
    def main_metric(self) -> str:
        """The final score a study is read by (the UI's saved view shows it beside the objective): SimCSE's
        STS Avg., else the STS12-16 mean, else the SentEval transfer mean, else the first final task's
        main score, else the target's final dev score."""
        for name in ("STS.avg", "STS12-16.wmean", "transfer.avg"):
            if name in self.final_metrics:
                return name
        if self.final_tasks:
            from harness.evaluate.registry import get_task

            return f"{self.final_tasks[0]}.{get_task(self.final_tasks[0]).main_score}"
        return DEV + self.target

    def as_dict(self) -> dict[str, Any]:
        return {
            key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scoring:
        return cls(str(data["scorer"]), str(data["target"]), tuple(data["dev_scores"]),
                   tuple(data["final_metrics"]), tuple(data.get("final_tasks", ())),
                   tuple(data.get("transfer_tasks", ())))  # fmt: skip


class Scorer:
    """One trial's scoring of `model` (what the method built: harness/networks/). `encode` /
    `final_encode` are None where the method has no encoder. Declared torch-free: the scoring imports
    what it needs when it runs."""

    name: ClassVar[str] = ""
    reads_final_tasks: ClassVar[bool] = False  # scores embeddings at the end: `final_tasks` picks the tasks
    saves_embeddings: ClassVar[bool] = False  # `arrays` gives embeddings with `save_embeddings: true`
    final_items: pd.DataFrame | None = None  # set by `final()` where the scorer keeps a record

    def __init__(
        self,
        model: Any,
        run: ResolvedRun,
        data: Any,
        data_dir: Path,
        encode: SentenceEncoder | None,
        final_encode: SentenceEncoder | None,
    ) -> None:
        self.model, self.run, self.data, self.data_dir = model, run, data, data_dir
        self.encode, self.final_encode = encode, final_encode
        self.scoring: Scoring = run.plan.scoring
        self.metric = self.scoring.target

    @classmethod
    def scoring_of(cls, run: ResolvedRun) -> Scoring:
        """What this scorer scores for `run` (read it from `run.plan.scoring`, which calls this once).
        By default: the dev scores it can select on, each logged finally under `dev.`."""
        choices = cls.metric_choices(run)
        target = run.settings.objective_metric or choices[0]
        return Scoring(cls.name, target, choices, tuple(sorted(DEV + name for name in choices)))

    @classmethod
    def metric_choices(cls, run: ResolvedRun) -> tuple[str, ...]:
        """The dev scores this scorer can select on, the default first (names without `dev.`)."""
        raise NotImplementedError

    @classmethod
    def check_metric(cls, run: ResolvedRun, where: str) -> None:
        chosen, choices = run.settings.objective_metric, cls.metric_choices(run)
        if chosen is not None and chosen not in choices:
            raise HarnessError(
                f"{where}: field 'objective_metric': {chosen!r} is not a dev score of the {cls.name!r} "
                f"scorer of method {run.settings.method!r}; choose one of {', '.join(choices)}"
            )
        if run.settings.final_tasks is not None and not cls.reads_final_tasks:
            raise HarnessError(
                f"{where}: field 'final_tasks' applies to runs scored on embeddings (STS), and method "
                f"{run.settings.method!r} is scored by the {cls.name!r} scorer; remove it"
            )
        if run.settings.mteb_results and not cls.reads_final_tasks:
            raise HarnessError(
                f"{where}: field 'mteb_results' writes the STS scores of runs scored on embeddings; method "
                f"{run.settings.method!r} is scored by the {cls.name!r} scorer; remove it"
            )
        if run.settings.save_embeddings and not cls.saves_embeddings:
            raise HarnessError(
                f"{where}: field 'save_embeddings' saves the SST dev embeddings of runs scored on the CS224N "
                f"dev sets, and method {run.settings.method!r} is scored by the {cls.name!r} scorer; "
                "remove it"
            )

    @property
    def target_metric(self) -> str:
        return f"dev.{self.metric}"

    def dev_scores(self) -> dict[str, float]:
        """Every dev score of the current weights (names without `dev.`); `metric` among them. All are
        logged at each evaluation, so per-task curves exist (Chen Fig. 2, David et al. Fig. 2)."""
        raise NotImplementedError

    def train_scores(self) -> dict[str, float]:
        """Scores of the current weights on (part of) the training data, where the scorer has them and
        the run asks (`train_eval_size`; David et al. Figs. 2-3 plot train accuracy): logged as
        `train_set.<name>` at each evaluation. None by default."""
        return {}

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        """(MLflow metrics, the JSON-able results) of the final weights; sets `final_items`."""
        raise NotImplementedError

    def items(self) -> pd.DataFrame | None:
        """The per-item record of the last `final()` (harness.stats.items: each scored item's prediction
        beside its gold value, from which its final scores are recomputed), which the trial logs as the
        artifact `items.parquet`; None before `final()` and where the scorer keeps none."""
        return self.final_items

    def arrays(self) -> dict[str, np.ndarray]:
        """Arrays of the final weights the trial logs as artifacts, by file name (none by default)."""
        return {}

    def final_note(self) -> str:
        """What `final()` is about to do, for the terminal (it can take minutes)."""
        return f"final evaluation ({self.name})"

    @classmethod
    def dev_texts(cls, run: ResolvedRun, data_dir: Path) -> list[str]:
        """The distinct texts one dev evaluation encodes (what `harness plan` counts and times)."""
        raise NotImplementedError

    @classmethod
    def final_texts(cls, run: ResolvedRun, data_dir: Path) -> list[str] | None:
        """The distinct texts the final evaluation encodes, or None where it is one more dev pass."""
        return None

    @classmethod
    def preflight(cls, run: ResolvedRun, data_dir: Path) -> None:
        """Load what scoring `run` needs, so a missing file fails before any trial."""


SCORERS: Registry[type[Scorer]] = Registry("scorer", "harness.scoring", "name", "see `harness methods`")
register_scorer = SCORERS.register
