import pandas as pd

from harness.report.collect import row_labels
from harness.report.spec import REPORTS_DIR, default_columns, load_spec
from harness.resolve.study_spec import STUDIES_DIR


def test_the_default_columns_are_the_declared_members_of_sts_avg() -> None:
    columns = default_columns()
    assert list(columns) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R", "Avg."]
    assert columns["STS-B"] == "STSBenchmark.spearman" and columns["Avg."] == "STS.avg"


def test_default_spec_uses_sts_scores_when_present() -> None:
    spec = load_spec("no_such_study", [*default_columns().values(), "dev.overall", "dev.overall.best"])
    assert spec.tables[0].columns == {"overall dev (best)": "dev.overall.best", **default_columns()}


def test_default_spec_has_the_final_scores_the_runs_have_and_labels_rows_by_searched_params() -> None:
    """Issue 21: an own study scored on STS-B test alone (final_tasks) shows that score, not dev only."""
    spec = load_spec(
        "no_such_study", ["STSBenchmark.spearman", "dev.STSBenchmark.spearman.best"], ["temperature"]
    )
    table = spec.tables[0]
    assert table.columns == {"STS-B dev spearman (best)": "dev.STSBenchmark.spearman.best",
                             "STS-B": "STSBenchmark.spearman"}  # fmt: skip
    assert table.label == "temperature = {temperature}"


def test_default_spec_falls_back_to_dev_scores() -> None:
    spec = load_spec("no_such_study", ["dev.sst.acc", "dev.overall", "dev.overall.best", "train.loss"])
    assert spec.tables[0].columns == {"sst dev acc": "dev.sst.acc", "overall dev": "dev.overall"}
    assert spec.tables[0].label == "trial {trial}"


def test_shipped_specs_validate() -> None:
    for path in STUDIES_DIR.glob("*.yaml"):
        assert (REPORTS_DIR / path.name).is_file(), f"{path.stem} has no report spec"
        assert load_spec(path.stem).study == path.stem


def test_every_reference_row_names_a_row_the_study_produces() -> None:
    """A typo in a transcribed label would silently drop the paper's numbers from the report."""
    from harness.report.collect import filter_runs
    from harness.report.parts.grid_table import GridTable
    from harness.report.parts.runs_table import RunsTable
    from harness.resolve.study_spec import load_study

    def shown(value: object, rename: dict[str, str]) -> str:
        text = f"{value:g}" if isinstance(value, int | float) else str(value)
        return rename.get(text, text)

    checked = 0
    for path in STUDIES_DIR.glob("*.yaml"):
        runs = pd.DataFrame([run.flat() for run in load_study(path.stem, "paper").grid_runs()])
        for table in load_spec(path.stem).tables:
            if not isinstance(table, RunsTable | GridTable) or not table.reference:
                continue
            kept = filter_runs(runs, table.where, table.name)
            if isinstance(table, RunsTable):
                labels = {
                    table.rename.get(label, label) for label in row_labels(kept, table.label, table.name)
                }
                columns = set(table.columns) | set(table.derived_columns)
            else:
                labels = {shown(v, table.rename) for v in kept[table.rows]}
                columns = {shown(v, table.rename) for v in kept[table.columns]}
            labels |= set(table.derived_rows)
            assert set(table.reference) <= labels, (path.stem, set(table.reference) - labels)
            assert all(set(values) <= columns for values in table.reference.values()), (path.stem, table.name)
            checked += 1
    assert checked >= 4


def test_a_reference_column_the_table_lacks_is_refused() -> None:
    import pytest
    from pydantic import ValidationError

    from harness.report.parts.runs_table import RunsTable

    with pytest.raises(ValidationError, match="names columns"):
        RunsTable(name="t", kind="runs", label="{variant}", columns={"Overall": "dev.overall"},
                  reference={"fusion": {"Overal": 0.5}})  # fmt: skip


def test_shipped_captions_are_valid_latex_text() -> None:
    """Captions go into LaTeX as written (they may hold math such as $\\lambda$): outside math, none of
    LaTeX's special characters may stand bare (an underscore in a variant's name broke a PDF)."""
    import re

    for path in REPORTS_DIR.glob("*.yaml"):
        for table in load_spec(path.stem).tables:
            text = re.sub(r"\$[^$]*\$", "", table.caption)
            assert not re.search(r"(?<!\\)[_%&#]", text), (path.stem, table.name)


def _metric_names() -> set[str]:
    """Every final metric a shipped objective can log: evaluation tasks and aggregates, the CS224N dev
    and training-set scores, GLUE dev scores (a typo in a spec's metric would print a '--' column)."""
    from harness.data.glue import GLUE_TASKS
    from harness.evaluate.registry import aggregates, tasks

    cs224n = ["sst.acc", "quora.acc", "sts.pearson", "overall", "overall_r01"]
    names = {f"{prefix}.{score}" for prefix in ("dev", "train_set") for score in cs224n}
    names |= {f"dev.{task}.{metric}" for task, spec in GLUE_TASKS.items() for metric in spec.metrics}
    names |= set(aggregates())
    scores = ("spearman", "pearson", "spearman_mean", "spearman_wmean", "acc", "f1")
    names |= {f"{task}.{score}" for task in tasks() for score in scores}
    return names


def test_every_shipped_metric_is_one_a_run_can_log() -> None:
    known = _metric_names()
    for path in REPORTS_DIR.glob("*.yaml"):
        spec = load_spec(path.stem)
        for part in [*spec.tables, *spec.figures]:
            metrics = (
                [part.metric] if hasattr(part, "metric") else list(getattr(part, "columns", {}).values())
            )
            assert set(metrics) <= known, (path.stem, part.name, sorted(set(metrics) - known))


def test_default_spec_puts_a_configurations_seeds_in_one_row() -> None:
    """A researcher's `seeds: [1, 2]` gives one row per configuration (mean +- std and the two-level
    interval), not one per seed."""
    spec = load_spec("no_such_study", ["STSBenchmark.spearman"], ["temperature", "seed"])
    assert spec.tables[0].label == "temperature = {temperature}"
    assert load_spec("no_such_study", ["STSBenchmark.spearman"], ["seed"]).tables[0].label == "all seeds"
    assert spec.tables[0].caption.endswith("then the final tasks; STS scores x 100.")  # no CS224N or SentEval
    cs224n = load_spec("no_such_study", ["dev.sst.acc", "dev.quora.acc"], ["seed"]).tables[0].caption
    assert cs224n.endswith("the dev scores; CS224N scores as fractions.") and "STS" not in cs224n
