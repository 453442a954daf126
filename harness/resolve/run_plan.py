"""One plan per run: what a resolved run will train, score and log, worked out once from its
`ResolvedRun` (`run.plan`) and read by everyone after: the preflight, `--dry-run`, `harness plan`, the
trial, its scorer, and the report, which reads it back from MLflow (every trial logs its plan as the
artifact `plan.json`; a study's parent run logs its paper profile's plans as `paper_plans.json`).

Its parts:
- `stages`: the pipeline's training stages as their YAML fields (`kind` first); empty for a method that
  trains in one loop of its own (its `method` says which);
- `scoring`: the scorer's part (harness.scoring.registry.Scoring): the target metric, the dev scores,
  the final tasks and the final metrics; each scorer supplies it, so a new scorer needs nothing here;
- `metrics`: every metric name the run logs beyond its training curves, with its MLflow section
  (harness.tracking.metric_names; None: the UI's "Model metrics");
- `data`: the data it reads: the training sources (the SNLI setting, the Quora file, the GLUE source) and
  the evaluation's tasks;
- `cost`: the fields `harness plan` prices a trial by (model, lengths, batches, schedule, precision);
- `params`: every resolved field, as MLflow logs them (what the report compares with the paper's setting).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.scoring.registry import DEV, Scoring
from harness.tracking.metric_names import OBJECTIVE, logged

if TYPE_CHECKING:
    from harness.resolve.run_spec import ResolvedRun

PLAN_ARTIFACT = "plan.json"  # on every trial (a study's parent: harness.resolve.paper_plans)
COST_FIELDS = ("model", "pooling", "max_seq_length", "eval_max_seq_length", "batch_size", "eval_batch_size",
               "epochs", "max_steps", "eval_every", "precision", "compile", "transfer_classifier",
               "transfer_preset")  # fmt: skip
LOOP_TOTALS = ("train.best_step", "train.steps", "train.seconds")  # logged by every trial that trains


@dataclass(frozen=True)
class RunPlan:
    """What one run will train, score and log (see the module's docstring)."""

    method: str
    variant: str | None
    scoring: Scoring
    stages: tuple[dict[str, Any], ...] = ()
    data: dict[str, Any] = field(default_factory=dict)
    cost: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def metrics(self) -> dict[str, str | None]:
        """Every metric the run logs but its training curves (`train.loss`...), by harness name, with its
        MLflow section: the dev scores and the target's best, the objective, the loop's totals, the final
        metrics."""
        target = DEV + self.scoring.target
        names = [*(DEV + name for name in self.scoring.dev_scores), f"{target}.best", OBJECTIVE, *LOOP_TOTALS]
        names += list(self.scoring.final_metrics)
        return {name: section_of(name) for name in dict.fromkeys(names)}

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "variant": self.variant, "scoring": self.scoring.as_dict(),
                "stages": list(self.stages), "data": self.data, "cost": self.cost, "params": self.params,
                "metrics": self.metrics}  # fmt: skip

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunPlan:
        return cls(data["method"], data.get("variant"), Scoring.from_dict(data["scoring"]),
                   tuple(data.get("stages", ())), data.get("data", {}), data.get("cost", {}),
                   data.get("params", {}))  # fmt: skip


def section_of(name: str) -> str | None:
    """The MLflow section a harness metric is stored under (None: no section)."""
    stored = logged(name)
    return stored.partition("/")[0] if "/" in stored else None


def plan_run(run: ResolvedRun) -> RunPlan:
    """The plan of a resolved run (call `run.plan`, which keeps it)."""
    scoring = run.scorer.scoring_of(run)
    settings = run.settings.model_dump(mode="json")
    sources = run.sources(Path("."))  # its data fields; no file is read
    training = {"nli": run.nli.model_dump(mode="json"), "quora_train": sources.quora_train,
                "glue_source": sources.glue_source, "glue_dir": sources.glue_dir}  # fmt: skip
    return RunPlan(
        method=run.method.name,
        variant=run.variant,
        scoring=scoring,
        stages=tuple({"kind": stage.kind, **stage.model_dump(mode="json")} for stage in run.stages),
        data={"training": training, "final_tasks": list(scoring.final_tasks)},
        cost={name: settings.get(name) for name in COST_FIELDS},
        params=json.loads(json.dumps(run.flat(), default=str)),
    )


def plans_json(plans: list[RunPlan]) -> str:
    return json.dumps([plan.as_dict() for plan in plans], indent=2, default=str)


def plans_from_json(text: str) -> list[RunPlan]:
    return [RunPlan.from_dict(entry) for entry in json.loads(text)]
