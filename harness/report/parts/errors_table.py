"""`kind: errors`: error analysis, the dev examples a run gets most wrong (Phillips Tables 2-3): the STS
dev pairs scored worst, and the SST dev sentences misclassified most confidently, from the dev predictions
a CS224N trial saves in `results.json`.

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
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import Field, model_validator

from harness.errors import HarnessError
from harness.report.collect import labelled_runs
from harness.report.parts.base import PartContext, TablePart, register_part
from harness.report.tables import escape_latex

if TYPE_CHECKING:
    import pandas as pd

    from harness.tracking.tracker import Tracker


@register_part("errors")
class ErrorsTable(TablePart):
    """Error analysis (Phillips Tables 2-3): the `top` STS dev pairs scored worst, or SST dev sentences
    misclassified most confidently, by the first of `runs` (labels), every run's prediction beside them."""

    task: Literal["sts", "sst"]
    label: str = Field(description="row label template over params, e.g. '{variant}'")
    runs: list[str] = Field(min_length=1, description="labels of the runs compared; the first picks the rows")
    top: int = Field(10, gt=0)
    pick: Literal["worst", "random_beyond"] = Field(
        "worst",
        description="worst: the `top` rows the first run gets most wrong; random_beyond (STS): `top` rows "
        "drawn at random (seed `seed`) among those whose |prediction - gold| exceeds `beyond` (Phillips 5.1)",
    )
    beyond: float | None = Field(None, gt=0, description="random_beyond's threshold on |prediction - gold|")
    seed: int = 0
    caption: str = ""

    @model_validator(mode="after")
    def _pick_needs_its_fields(self) -> ErrorsTable:
        if (self.pick == "random_beyond") != (self.beyond is not None):
            raise ValueError("pick: random_beyond needs 'beyond' (and only it uses it)")
        if self.pick == "random_beyond" and self.task != "sts":
            raise ValueError("pick: random_beyond applies to task: sts")
        return self

    def latex(self, ctx: PartContext) -> str:
        from harness.data.paths import resolve_data_dir

        return errors_latex(
            error_rows(self, run_predictions(ctx.tracker, ctx.frame, self), resolve_data_dir(ctx.data_dir)),
            self,
        )


def run_predictions(tracker: Tracker, frame: pd.DataFrame, spec: ErrorsTable) -> dict[str, list]:
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
    import pandas as pd

    from harness.data.cs224n import multitask_data

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


def errors_latex(table: pd.DataFrame, spec: ErrorsTable) -> str:
    """The rows as a booktabs table, sentence columns wrapped to share 11 cm."""
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
