from harness.report.spec import DEFAULT_COLUMNS, load_spec


def test_default_spec_uses_sts_scores_when_present() -> None:
    spec = load_spec("no_such_study", [*DEFAULT_COLUMNS.values(), "dev.overall"])
    assert spec.tables[0].columns == DEFAULT_COLUMNS


def test_default_spec_falls_back_to_dev_scores() -> None:
    spec = load_spec("no_such_study", ["dev.sst.acc", "dev.overall", "dev.overall.best", "train.loss"])
    assert spec.tables[0].columns == {"dev.overall": "dev.overall", "dev.sst.acc": "dev.sst.acc"}


def test_shipped_specs_validate() -> None:
    for study in ("lambda_tau_sweep", "multitask_objective", "unsup_strategies", "supcl_seq_views"):
        assert load_spec(study).study == study
