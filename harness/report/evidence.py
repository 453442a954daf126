"""The report's evidence: each run's per-item record (the `items.parquet` artifact, read from MLflow
alone) and a row's resampled scores (harness.stats.resample: items only for one seed, seeds then items for
several), cached for the whole report, so every table, claim and book page of a study shares one set of
resamples (paired by construction)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.stats.equivalence import Margins
from harness.stats.items import ARTIFACT, read_items
from harness.stats.resample import (
    RESAMPLES_ARTIFACT,
    Resampler,
    item_resamples,
    read_resamples,
    seed_contrast,
    seed_resamples,
)

if TYPE_CHECKING:
    from harness.tracking.tracker import Tracker


@dataclass
class Evidence:
    """Item records and resampled scores of a study's runs."""

    tracker: Tracker
    resampler: Resampler = field(default_factory=Resampler)
    seeds: dict[str, object] = field(default_factory=dict)  # run id -> its seed: rows pair by seed names
    reproduced: dict[str, dict[tuple[str, str], str]] = field(default_factory=dict)  # table -> cell -> where
    equivalent: dict[str, dict[tuple[str, str], bool]] = field(default_factory=dict)  # table -> cell -> TOST
    margins: Margins = field(default_factory=Margins)  # the report's stated equivalence margins
    _records: dict[str, pd.DataFrame | None] = field(default_factory=dict)
    _studies: dict[str, pd.DataFrame] = field(default_factory=dict)
    _runs: dict[str, dict[str, np.ndarray | None]] = field(default_factory=dict)

    def _saved(self, run_id: str) -> dict[str, np.ndarray]:
        """The run's item resamples saved when its trial ended, where drawn with this bootstrap."""
        with tempfile.TemporaryDirectory() as scratch:
            try:
                path = self.tracker.download(run_id, RESAMPLES_ARTIFACT, scratch)
            except Exception:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
                return {}
            return read_resamples(path, self.resampler) or {}

    def _cached(self, run_id: str) -> dict[str, np.ndarray | None]:
        """The run's resamples known so far: first those its trial saved."""
        if run_id not in self._runs:
            self._runs[run_id] = self._saved(run_id)  # type: ignore[assignment]
        return self._runs[run_id]

    def has_items(self, run_id: str) -> bool:
        """Whether the run has evidence: saved resamples or an item record."""
        return bool(self._cached(run_id)) or self.record(run_id) is not None

    def record(self, run_id: str) -> pd.DataFrame | None:
        """The run's item record, or None where it has none (a run from before records were kept)."""
        if run_id not in self._records:
            with tempfile.TemporaryDirectory() as scratch:
                try:
                    path = self.tracker.download(run_id, ARTIFACT, scratch)
                except Exception:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
                    self._records[run_id] = None
                else:
                    self._records[run_id] = _readable(path)
        return self._records[run_id]

    def _per_run(self, run_ids: Sequence[str], metrics: list[str]) -> list[dict[str, np.ndarray]]:
        """Each run's item resamples of `metrics` (those its record gives), computed once per report."""
        per_run = []
        for run_id in run_ids:
            cached = self._cached(run_id)
            missing = [m for m in metrics if m not in cached]
            record = self.record(run_id) if missing else None
            if missing and record is not None:
                computed = item_resamples(record, self.resampler, missing)
                cached.update(computed)
                cached.update({m: None for m in missing if m not in computed})  # asked, not computable
                self._records.pop(run_id)  # hundreds of runs: keep their resamples, not their records
            per_run.append({m: found for m in metrics if (found := cached.get(m)) is not None})
        return per_run

    def _seed_names(self, run_ids: Sequence[str]) -> list[object] | None:
        names = [self.seeds.get(run_id) for run_id in run_ids]
        return names if None not in names else None

    def resampled(self, run_ids: Sequence[str], metrics: Iterable[str]) -> dict[str, np.ndarray]:
        """The row's B resampled values of each of `metrics` it can recompute (its runs in seed order:
        items only for one, seeds then items for several; a metric a run has no record for is left
        out). Each run's item resamples are computed once and shared by every row, table and claim."""
        per_run = self._per_run(run_ids, list(dict.fromkeys(metrics)))
        if not per_run:
            return {}
        return seed_resamples(per_run, self.resampler, self._seed_names(run_ids))

    def difference(self, better: Sequence[str], worse: Sequence[str], metric: str) -> np.ndarray | None:
        """Resamples of row `better` minus row `worse` on `metric`, the few-seeds correction made on the
        difference (paired where the rows have the same seeds; harness.stats.few_seeds), or None where a
        run has no record for it."""
        return self.contrast([(better, 1.0), (worse, -1.0)], metric)

    def contrast(self, terms: Sequence[tuple[Sequence[str], float]], metric: str) -> np.ndarray | None:
        """Resamples of sum_i sign_i * row_i on `metric` (`terms`: each row's runs and its sign; a gain is
        (a - b) - (c - d)), corrected as one (harness.stats.resample.seed_contrast), or None where a run has
        no record for it."""
        rows = [self._per_run(runs, [metric]) for runs, _ in terms]
        if not all(rows):
            return None
        names = [self._seed_names(runs) for runs, _ in terms]
        return seed_contrast(rows, [sign for _, sign in terms], self.resampler, names).get(metric)

    def study_runs(self, study: str) -> pd.DataFrame:
        """Another study's finished runs in the same store (its latest study run), read once per report:
        claims that name its rows share them."""
        if study not in self._studies:
            from harness.tracking.study_runs import trial_frame

            self._studies[study] = trial_frame(self.tracker, study)[0]
        return self._studies[study]

    def covers(self, run_ids: Sequence[str], other: Sequence[str] | None = None) -> str:
        """What a row's interval covers, for captions: seeds and items, or items only; of a paired
        difference of two rows (`other`), both rows' seeds ("seeds and items (3 and 2 seeds)")."""
        k = sorted({len(run_ids), len(other)}) if other is not None else [len(run_ids)]
        if max(k) == 1:
            return "items only, 1 seed"
        seeds = " and ".join(str(n) for n in k)
        few = ", few: Student's t on the seeds" if min(k) <= 3 else ""
        return f"seeds and items ({seeds} seeds{few})"


def _readable(path: Path) -> pd.DataFrame | None:
    """A record read back, or None where the file cannot be read (a run's cells then have no interval)."""
    try:
        return read_items(path)
    except Exception:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
        return None
