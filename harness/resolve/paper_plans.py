"""A study's paper profile as plans (harness.resolve.run_plan), which its parent run logs when it starts
(`paper_plans.json`): a report of any profile then knows from MLflow alone what the paper profile
trains, scores and logs (its setting, its grid's configurations, its final metrics) and which variants
the study declares, however the study file changed since."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.resolve.run_plan import RunPlan

if TYPE_CHECKING:
    from harness.resolve.study_spec import ResolvedStudy

PAPER_PLANS_ARTIFACT = "paper_plans.json"


@dataclass(frozen=True)
class PaperPlans:
    """The variants a study declares, and its paper profile's plan for each grid point (None: the study
    has no paper profile, nor has the study it was derived from)."""

    variants: tuple[str, ...]
    plans: tuple[RunPlan, ...] | None

    def final_metrics(self) -> set[str]:
        """Every final metric the paper profile logs (empty without one)."""
        return {name for plan in self.plans or () for name in plan.scoring.final_metrics}

    def configurations(self) -> list[dict] | None:
        """Each configuration the paper profile runs, as its flat params."""
        return None if self.plans is None else [dict(plan.params) for plan in self.plans]

    def to_json(self) -> str:
        plans = None if self.plans is None else [plan.as_dict() for plan in self.plans]
        return json.dumps({"variants": list(self.variants), "plans": plans}, indent=2, default=str)

    @classmethod
    def from_json(cls, text: str) -> PaperPlans:
        data = json.loads(text)
        plans = data.get("plans")
        return cls(tuple(data.get("variants", ())),
                   None if plans is None else tuple(RunPlan.from_dict(p) for p in plans))  # fmt: skip


def paper_plans(study: ResolvedStudy) -> PaperPlans:
    """The plans of `study`'s paper profile (as its YAML reads now), and the variants it declares. A
    study without one is reported as the shipped study whose report spec it borrows: a derived study's
    origin's paper profile, else that of the shipped study of its name."""
    from harness.resolve.study_spec import PAPER_PROFILE, load_study

    for source in (study.path, study.derived_from, study.name):
        if source is None:
            continue
        try:
            paper = load_study(source, PAPER_PROFILE)
        except HarnessError:
            continue
        if paper.profile == PAPER_PROFILE:
            return PaperPlans(tuple(study.variants), tuple(run.plan for run in paper.grid_runs()))
    return PaperPlans(tuple(study.variants), None)
