from harness.report.spec import REPORTS_DIR, default_columns, load_spec
from harness.study_spec import STUDIES_DIR


def test_the_default_columns_are_the_declared_members_of_sts_avg() -> None:
    columns = default_columns()
    assert list(columns) == ["STS12", "STS13", "STS14", "STS15", "STS16", "STS-B", "SICK-R", "Avg."]
    assert columns["STS-B"] == "STSBenchmark.spearman" and columns["Avg."] == "STS.avg"


def test_default_spec_uses_sts_scores_when_present() -> None:
    spec = load_spec("no_such_study", [*default_columns().values(), "dev.overall"])
    assert spec.tables[0].columns == default_columns()


def test_default_spec_falls_back_to_dev_scores() -> None:
    spec = load_spec("no_such_study", ["dev.sst.acc", "dev.overall", "dev.overall.best", "train.loss"])
    assert spec.tables[0].columns == {"dev.overall": "dev.overall", "dev.sst.acc": "dev.sst.acc"}


def test_shipped_specs_validate() -> None:
    for path in STUDIES_DIR.glob("*.yaml"):
        assert (REPORTS_DIR / path.name).is_file(), f"{path.stem} has no report spec"
        assert load_spec(path.stem).study == path.stem
