"""Whether a report's runs were made at the paper's setting, so that "harness - paper" means something.

The paper's setting is the study's `paper` profile: its model, training data, schedule and precision
(fp32 where the paper's code trained in fp32: runs at bf16, `--set precision=bf16` or `auto` on a GPU,
are named as a difference). The runs
match it when every one of them has the paper profile's value for each of those fields (whatever their
profile is called). Otherwise the paper's rows are printed as the paper's (model X) without a
difference, and the caption says why: a smoke profile's all-MiniLM-L6-v2 after 60 steps beating an
8-layer BERT trained on all of SNLI says nothing about the method.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from harness.resolve.paper_plans import PaperPlans

SETTING = ("model", "train_data", "snli_splits", "train_limit", "epochs", "max_steps", "batch_size", "lr",
           "max_seq_length", "glue_source", "quora_train", "precision")  # fmt: skip
PAPER_PROFILE = "paper"


@dataclass(frozen=True)
class Setting:
    """The paper's model and how the runs differ from the paper's setting ('' when they match)."""

    paper_model: str
    differences: str

    @property
    def matches(self) -> bool:
        return not self.differences


def _same(run_value: object, paper_value: object) -> bool:
    try:
        return float(run_value) == float(paper_value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return str(run_value) == str(paper_value)


def paper_setting(plans: PaperPlans | None, frame: pd.DataFrame) -> Setting | None:
    """How the runs in `frame` stand to the paper profile's plans (as the study's parent run logged them);
    None when the study has no paper profile."""
    if plans is None or not plans.plans:
        return None
    runs = plans.plans
    by_variant = {run.variant: run.params for run in runs}  # each run against its variant's paper setting
    first = runs[0].params
    differences = []
    for field in SETTING:
        if field not in first or field not in frame.columns:
            continue
        rows = frame.get("variant", pd.Series([None] * len(frame), index=frame.index))
        paper = [by_variant.get(variant, first).get(field) for variant in rows]
        if not all(_same(v, p) for v, p in zip(frame[field], paper, strict=True)):
            seen = ", ".join(sorted({str(v) for v in frame[field]}))
            wanted = ", ".join(sorted({str(p) for p in paper}))
            differences.append(f"{field} {seen} (paper: {wanted})")
    return Setting(str(first.get("model", "?")), "; ".join(differences))
