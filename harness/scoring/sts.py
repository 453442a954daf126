"""`sts`: STS-B dev Spearman during training (or Pearson); finally STS12-16, STS-B test and SICK-R test
(cosine similarity vs gold, x 100) and their average `STS.avg` (harness/evaluate/tasks/sts.py), and with
`eval_suite: transfer` / `full` the SentEval transfer tasks (`transfer_classifier`, `transfer_preset`),
with every task's per-item record (harness.evaluate.registry)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from harness.errors import HarnessError
from harness.evaluate.registry import collected, get_task, suites
from harness.evaluate.suite import evaluate_tasks, flat_metric_names, flat_metrics, resolve_tasks
from harness.evaluate.tasks.sts import STS_TASKS, load_sts_task
from harness.scoring.registry import Scorer, Scoring, register_scorer

DEV_TASK = "STSBenchmark-dev"


@register_scorer("sts")
class STSScorer(Scorer):
    reads_final_tasks = True

    @classmethod
    def metric_choices(cls, run: Any) -> tuple[str, ...]:
        return ("STSBenchmark.spearman", "STSBenchmark.pearson")

    def dev_scores(self) -> dict[str, float]:
        assert self.encode is not None  # every method scored on STS has an encoder (or GloVe's)
        dev = evaluate_tasks(self.encode, self.data_dir, [DEV_TASK], self.run.settings.text_variant)
        return {f"STSBenchmark.{k}": float(cast(float, dev[DEV_TASK][k])) for k in ("spearman", "pearson")}

    @classmethod
    def scoring_of(cls, run: Any) -> Scoring:
        """The final tasks (`final_tasks`, else the STS tests and the `eval_suite`'s), their metrics as
        `flat_metrics` names them, and the classifier-probed ones among them; an unknown task or suite is
        an error naming its field."""
        s = run.settings
        try:
            final_tasks(s.eval_suite)
        except HarnessError as exc:
            raise HarnessError(f"field 'eval_suite': {exc}") from None
        try:
            tasks = tuple(final_tasks(s.eval_suite, s.final_tasks))
        except HarnessError as exc:
            raise HarnessError(f"field 'final_tasks': {exc}") from None
        transfer = tuple(t for t in tasks if get_task(t).kind == "classification")
        metrics = tuple(sorted(flat_metric_names(tasks)))
        return replace(
            super().scoring_of(run), final_metrics=metrics, final_tasks=tasks, transfer_tasks=transfer
        )

    def final(self) -> tuple[dict[str, float], dict[str, Any]]:
        """The STS test sets, plus the `eval_suite`'s tasks (SentEval transfer: Liao Tables 3-5)."""
        s = self.run.settings
        assert self.final_encode is not None  # as for dev_scores
        records: list = []
        tasks = list(self.scoring.final_tasks)
        results = evaluate_tasks(self.final_encode, self.data_dir, tasks, s.text_variant, s.transfer_preset,
                                 s.transfer_classifier, items=records)  # fmt: skip
        self.final_items = collected(records)
        return flat_metrics(results), results

    def final_note(self) -> str:
        tasks = self.scoring.final_tasks
        shown = ", ".join(tasks) if len(tasks) <= 3 else f"{', '.join(tasks[:2])}, ..., {tasks[-1]}"
        return f"evaluating {len(tasks)} task(s): {shown}"

    @classmethod
    def check_metric(cls, run: Any, where: str) -> None:
        super().check_metric(run, where)
        try:
            tasks = run.plan.scoring.final_tasks
        except HarnessError as exc:
            raise HarnessError(f"{where}: {exc}") from None
        if run.settings.mteb_results:
            from harness.evaluate.mteb_results import mteb_tasks

            try:
                mteb_tasks(list(tasks))
            except HarnessError as exc:
                raise HarnessError(f"{where}: field 'mteb_results': {exc} to 'final_tasks'") from None

    @classmethod
    def dev_texts(cls, run: Any, data_dir: Path) -> list[str]:
        return task_texts(data_dir, [DEV_TASK], run.settings.text_variant)

    @classmethod
    def final_texts(cls, run: Any, data_dir: Path) -> list[str]:
        return task_texts(data_dir, list(run.plan.scoring.final_tasks), run.settings.text_variant)

    @classmethod
    def preflight(cls, run: Any, data_dir: Path) -> None:
        variant = run.settings.text_variant
        for name in run.plan.scoring.final_tasks:
            get_task(name).load(data_dir, variant)
        load_sts_task(data_dir, "STSBenchmark", variant, "dev")


def task_texts(data_dir: Path, names: list[str], variant: str) -> list[str]:
    """The distinct sentences of the tasks (each is encoded once per evaluation), sorted."""
    texts: set[str] = set()
    for name in names:
        task = get_task(name)
        texts.update(task.sentences(task.load(data_dir, variant)))
    return sorted(texts)


def final_tasks(choice: str, chosen: list[str] | None = None) -> list[str]:
    """The STS test sets, then the other tasks of `choice` (a suite's name or a comma list of tasks); or,
    with `final_tasks` (`chosen`: task and suite names), exactly those tasks."""
    if chosen is not None:
        if not chosen:
            raise HarnessError("an empty list scores nothing; name tasks or a suite (see `harness tasks`)")
        named = [t for name in chosen for t in (resolve_tasks(suite=name) if name in suites() else [name])]
        return list(dict.fromkeys(resolve_tasks(named)))
    named = resolve_tasks(suite=choice) if choice in suites() else resolve_tasks(choice)
    return [*STS_TASKS, *(t for t in named if t not in STS_TASKS)]
