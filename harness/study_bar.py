"""The study's progress bar: trials done out of all, and the best dev score so far."""

from __future__ import annotations

import optuna
from tqdm.auto import tqdm

from harness.study import best_value, done_count, remaining
from harness.study_spec import ResolvedStudy


def study_bar(study: ResolvedStudy, opt: optuna.Study, progress: bool, position: int = 0) -> tqdm:
    total = done_count(opt) + remaining(opt, study)
    bar = tqdm(
        total=total,
        initial=done_count(opt),
        desc=f"study {study.optuna_name}",
        unit="trial",
        disable=not progress,
        position=position,
    )
    update_bar(bar, opt)
    return bar


def update_bar(bar: tqdm, opt: optuna.Study) -> None:
    bar.n = done_count(opt)
    bar.set_postfix(best=f"{best_value(opt):.2f}")
    bar.refresh()
