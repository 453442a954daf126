"""`harness export STUDY`: the best trial's saved model (or the top k) out of MLflow into a directory that
`SentenceTransformer(path)` loads, with a model card (`README.md`, harness.commands.model_card). Trials
save their evaluated weights when the study sets `save_model: true` (harness.encoders.save); trials are
ranked by their best dev score, the Optuna objective (`<dev metric>.best`, logged by every trial)."""

from __future__ import annotations

from pathlib import Path

from harness.commands.model_card import write_model_card
from harness.errors import HarnessError
from harness.staging import staged
from harness.tracking.metric_names import metrics_of
from harness.tracking.study_runs import latest_parent
from harness.tracking.tracker import PARENT_TAG, Tracker


def ranked_trials(tracker: Tracker, study: str, profile: str | None) -> list[tuple[float, object]]:
    """(best dev score, run) of the latest study run's finished trials, best first."""
    parent = latest_parent(tracker, study, profile)
    runs = tracker.search_runs(
        [parent.info.experiment_id],
        f"tags.`{PARENT_TAG}` = '{parent.info.run_id}' and attributes.status = 'FINISHED'",
        max_results=50000,
    )
    scored = []
    for run in runs:
        best = [v for k, v in metrics_of(run).items() if k.endswith(".best") and k.startswith("dev.")]
        if best:
            scored.append((best[0], run))
    if not scored:
        raise HarnessError(f"study {study!r} has no finished trial with a dev score; run it first")
    return sorted(scored, key=lambda pair: -pair[0])


def export_best(tracker: Tracker, study: str, out: Path, profile: str | None, top: int = 1) -> list[Path]:
    """Download the `top` best trials' `model/` artifacts: into `out` itself for one, into
    `out/rank<i>-trial<n>/` for several. Staged next to `out` first: on error nothing is left behind."""
    chosen = [run for _, run in ranked_trials(tracker, study, profile)[:top]]
    for run in chosen:
        if not run.data.tags.get("model_saved", "").startswith("model/"):  # type: ignore[attr-defined]
            number = run.data.tags.get("trial", "?")  # type: ignore[attr-defined]
            raise HarnessError(
                f"trial {number} of {study!r} saved no model; set save_model: true in the study (or its "
                "profile's base) and re-run it"
            )
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise HarnessError(f"{out} exists and is not an empty directory; give --out a new one")
    with staged(out.parent, f".{out.name}-", "the exported model") as staging:
        names = [f"rank{rank}-trial{run.data.tags.get('trial', '?')}" for rank, run in enumerate(chosen, 1)]  # type: ignore[attr-defined]
        result = staging / "export"
        result.mkdir()
        for name, run in zip(names, chosen, strict=True):
            tracker.download(run.info.run_id, "model", staging / name).rename(result / name)  # type: ignore[attr-defined]
            write_model_card(tracker, run, result / name, f"{study}-{name}")
        if top == 1:
            result = result / names[0]
        if out.exists():
            out.rmdir()
        result.rename(out)
    return [out] if top == 1 else [out / name for name in names]
