"""The study's progress bar: trials done out of all, and the best dev score so far. Only on a terminal:
redirected to a file, the runner prints one line per trial instead (harness.commands.cli decides)."""

from __future__ import annotations

import math

import optuna
from tqdm.auto import tqdm

from harness.resolve.study_spec import ResolvedStudy
from harness.study.optuna_study import best_value, done_count, pareto_front, remaining


def study_bar(study: ResolvedStudy, opt: optuna.Study, progress: bool) -> tqdm:
    total = done_count(opt) + remaining(opt, study)
    bar = tqdm(
        total=total,
        initial=done_count(opt),
        desc=f"study {study.optuna_name}",
        unit="trial",
        disable=not progress,
    )
    update_bar(bar, opt)
    return bar


def update_bar(bar: tqdm, opt: optuna.Study) -> None:
    bar.n = done_count(opt)
    if len(opt.directions) > 1:  # several objectives: the size of the Pareto front so far
        bar.set_postfix(front=len(pareto_front(opt)))
    else:
        best = best_value(opt)
        bar.set_postfix(best=f"{best:.2f}" if math.isfinite(best) else "-")
    bar.refresh()
