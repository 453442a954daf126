"""Error-analysis tables (Phillips Tables 2-3): the STS dev pairs scored worst, and the SST dev sentences
misclassified most confidently, from the dev predictions a CS224N trial saves in `results.json`.

The first run named in `runs` picks the rows (largest |predicted - gold| for STS; highest probability on a
wrong class for SST; or, `pick: random_beyond`, STS pairs drawn at random among those it is off by more
than `beyond`, as Phillips 5.1: "four random sentence pairs where the difference between baseline
similarity and true similarity was greater than 2.5"); every named run's prediction is printed beside
them, so a baseline and a pre-trained model can be compared on the same examples.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.data.cs224n import multitask_data
from harness.data.paths import resolve_data_dir
from harness.errors import HarnessError
from harness.report.collect import labelled_runs
from harness.report.tables import escape_latex
from harness.tracking.tracker import Tracker

if TYPE_CHECKING:
    from harness.report.parts.errors_table import ErrorsTable


def run_predictions(tracker: Tracker, frame: pd.DataFrame, spec: ErrorsTable) -> dict[str, dict]:
    """label -> the dev predictions saved by that run (`results.json`), for each label in `spec.runs`."""
    runs = labelled_runs(frame, spec.label, spec.runs, f"table {spec.name}")
    out = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, run_id in runs.items():
            path = tracker.download(run_id, "results.json", scratch)
            predictions = json.loads(path.read_text()).get("predictions", {})
            if spec.task not in predictions:
                raise HarnessError(f"table {spec.name}: run {label!r} saved no {spec.task} dev predictions")
            out[label] = predictions[spec.task]
    return out


def error_rows(spec: ErrorsTable, predictions: dict[str, list], data_dir: Path) -> pd.DataFrame:
    """The table's rows: the first run's worst examples, every run's prediction beside them."""
    data = multitask_data(data_dir, None)
    first = np.asarray(predictions[spec.runs[0]])
    if spec.task == "sts":
        gold = data.sts_dev.targets
        error = np.abs(first - gold)
        order = np.argsort(-error, kind="stable")[: spec.top]
        if spec.pick == "random_beyond":
            candidates = np.flatnonzero(error > spec.beyond)
            drawn = np.random.default_rng(spec.seed).permutation(candidates)[: spec.top]
            order = np.sort(drawn)
        rows = {"Sentence 1": [data.sts_dev.first[i] for i in order],
                "Sentence 2": [data.sts_dev.second[i] for i in order], "Gold": gold[order]}  # fmt: skip
        rows.update({label: np.asarray(p)[order] for label, p in predictions.items()})
        return pd.DataFrame(rows)
    gold = data.sst_dev.labels
    wrong = np.flatnonzero(first.argmax(-1) != gold)
    order = wrong[np.argsort(-first[wrong].max(-1), kind="stable")][: spec.top]
    rows = {"Sentence": [data.sst_dev.texts[i] for i in order], "Gold": gold[order]}
    rows.update({label: np.asarray(p).argmax(-1)[order] for label, p in predictions.items()})
    return pd.DataFrame(rows)


def errors_latex(tracker: Tracker, frame: pd.DataFrame, spec: ErrorsTable) -> str:
    table = error_rows(spec, run_predictions(tracker, frame, spec), resolve_data_dir(None))
    text_columns = [c for c in table.columns if c.startswith("Sentence")]
    width = 11.0 / len(text_columns)
    head = " & ".join(escape_latex(c) for c in table.columns)
    lines = []
    for record in table.to_dict("records"):
        cells = [escape_latex(v) if k in text_columns else (f"{v:.2f}" if isinstance(v, float) else str(v))
                 for k, v in record.items()]  # fmt: skip
        lines.append(" & ".join(cells) + r" \\")
    columns = "".join(f"p{{{width:.1f}cm}}" if c in text_columns else "r" for c in table.columns)
    opening = [r"\begin{table}[H]", r"\centering\small", f"\\caption{{{spec.caption}}}",
               f"\\label{{tab:{spec.name}}}", f"\\begin{{tabular}}{{{columns}}}", r"\toprule"]  # fmt: skip
    closing = [r"\bottomrule", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join([*opening, head + r" \\", r"\midrule", *lines, *closing])
