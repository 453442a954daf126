"""Issue 41 item 1: change one thing and run again. `--set` / `--search` / an edited YAML run as a derived
study named by what differs (resumable, listed, reported); `--fresh` leaves no look-alike runs."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
import yaml

from harness.errors import HarnessError
from harness.resolve.derived import changes_between, derived_name, identify
from harness.resolve.overrides import SEARCH, SET, apply_overrides, parse_override
from harness.resolve.study_spec import check_plain_name, load_study
from harness.study.optuna_study import best_configuration, open_storage, open_study
from harness.tracking.tracker import Tracker
from tests.helpers import harness_here
from tests.test_own_study import own_study

VARIANTS = {
    "name": "v",
    "base": {"method": "scl", "lr": 2.0e-5, "max_steps": 4},
    "search": {"lambda": [0.1, 0.5]},
    "variants": {"plain": {}, "fusion": {"method": "fusion", "lr": 1.0e-5}},
    "profiles": {
        "smoke": {"base": {"max_steps": 2}, "variants": {"fusion": {"lr": 3.0e-5}}},
        "paper": {"seeds": [1, 2], "search": {"lambda": [0.5]}},
    },
}


def _apply(profile: str, *given: tuple[str, str]) -> dict:
    return apply_overrides(VARIANTS, [parse_override(option, text) for option, text in given], profile)


def test_a_short_field_is_set_wherever_the_profile_reads_it() -> None:
    edited = _apply("smoke", (SET, "max_steps=9"), (SET, "lr=1e-4"))
    assert edited["base"]["max_steps"] == 9 and edited["profiles"]["smoke"]["base"]["max_steps"] == 9
    assert edited["base"]["lr"] == 1e-4  # `1e-4` is text to YAML 1.1: typed like the number it replaces
    assert edited["variants"]["fusion"]["lr"] == 1e-4
    assert edited["profiles"]["smoke"]["variants"]["fusion"]["lr"] == 1e-4
    assert VARIANTS["base"]["max_steps"] == 4  # the YAML's mapping itself is untouched


def test_variant_profile_and_search_paths() -> None:
    edited = _apply("smoke", (SET, "fusion.temperature=0.2"), (SET, "profiles.paper.base.lr=5e-5"))
    assert edited["variants"]["fusion"]["temperature"] == 0.2
    assert edited["profiles"]["paper"]["base"]["lr"] == "5e-5"  # new there: as a YAML file reads it
    searched = _apply("smoke", (SEARCH, "lambda=0.2,0.3"), (SET, "seeds=[3, 4]"))
    assert searched["search"]["lambda"] == [0.2, 0.3] and searched["seeds"] == [3, 4]
    paper = _apply("paper", (SEARCH, "lambda=0.2"), (SET, "seeds=[3]"))  # the paper profile's own
    assert paper["profiles"]["paper"]["search"]["lambda"] == [0.2] and paper["search"]["lambda"] == [0.1, 0.5]
    assert paper["profiles"]["paper"]["seeds"] == [3]
    one = _apply("smoke", (SET, "lambda=0.7"))  # a searched field set: searched over that value alone
    assert one["search"]["lambda"] == [0.7]
    ranged = _apply("smoke", (SEARCH, "lr={low: 1e-5, high: 1e-4, log: true}"))
    assert ranged["search"]["lr"] == {"low": "1e-5", "high": "1e-4", "log": True}  # as a YAML file reads it
    seeded = _apply("paper", (SET, "seed=5"))  # the study's seeds are a grid dimension: one seed, 5
    assert seeded["profiles"]["paper"]["seeds"] == [5] and "seed" not in seeded["base"]


@pytest.mark.parametrize(
    ("option", "given", "message"),
    [
        (SET, "max_steps", "write --set FIELD=VALUE"),
        (SET, "=3", "write --set FIELD=VALUE"),
        (SET, "base..lr=3", "write --set FIELD=VALUE"),
        (SEARCH, "base.lr=1,2", "give a searched field by name"),
    ],
)
def test_malformed_overrides_are_one_line(option: str, given: str, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        parse_override(option, given)


def test_overrides_are_validated_like_the_yaml(tmp_path: Path, tiny_bert: Path) -> None:
    path = str(own_study(tmp_path, tiny_bert))
    with pytest.raises(HarnessError, match=r"field 'max_step' is neither a run field"):
        load_study(path, None, [parse_override(SET, "max_step=10")])
    with pytest.raises(HarnessError, match=r"field 'max_steps'.*greater than 0"):
        load_study(path, None, [parse_override(SET, "max_steps=0")])
    with pytest.raises(HarnessError, match=r"with --set sampler=bayes: field 'sampler'"):
        load_study(path, None, [parse_override(SET, "sampler=bayes")])
    study = load_study(
        path, None, [parse_override(SET, "max_steps=5"), parse_override(SEARCH, "temperature=0.2")]
    )
    assert study.base["max_steps"] == 5 and study.search == {"temperature": [0.2]}
    assert study.override_argv == ["--set", "max_steps=5", "--search", "temperature=0.2"]
    assert study.written_config is not None and study.written_config["base"]["max_steps"] == 3


def test_a_field_set_to_its_own_value_changes_nothing_and_says_so(tmp_path: Path, tiny_bert: Path) -> None:
    path = str(own_study(tmp_path, tiny_bert))
    with pytest.raises(HarnessError, match=r"--set max_steps=3 changes nothing profile base runs"):
        load_study(path, None, [parse_override(SET, "max_steps=3")])
    config = yaml.safe_load(Path(path).read_text())
    config["profiles"] = {"smoke": {"base": {"max_steps": 2}}}
    Path(path).write_text(yaml.safe_dump(config))
    with pytest.raises(HarnessError, match=r"a profile's own base and search win over the study's"):
        load_study(path, None, [parse_override(SET, "base.max_steps=7")])  # smoke reads its own max_steps
    assert load_study(path, None, [parse_override(SET, "max_steps=7")]).base["max_steps"] == 7


def test_changes_and_derived_names() -> None:
    old = {"base": {"max_steps": 5, "lr": 1e-5}, "search": {"temperature": [0.05, 0.1]}, "sampler": "grid"}
    new = {"base": {"max_steps": 10}, "search": {"temperature": [0.05]}, "sampler": "grid"}
    changes = changes_between(old, new)
    assert [str(c) for c in changes] == [
        "lr 1e-05 -> unset",
        "max_steps 5 -> 10",
        "search.temperature [0.05, 0.1] -> [0.05]",
    ]
    name = derived_name("my_simcse", changes)
    assert name == "my_simcse--lr-unset--max_steps-10--temperature-0.05"
    check_plain_name("study name", name)  # a folder, an MLflow experiment and an Optuna study name
    long = derived_name("s", [c for c in changes for _ in range(6)])
    assert len(long) <= 80 and long != derived_name("s", [c for c in changes for _ in range(5)])
    check_plain_name("study name", long)


def _stored(study, tmp_path: Path):  # noqa: ANN001, ANN202
    storage = open_storage(str(tmp_path / "journal"))
    open_study(study, storage, create=True)
    return storage


def test_identity_follows_the_stored_configuration(tmp_path: Path, tiny_bert: Path) -> None:
    path = own_study(tmp_path, tiny_bert)
    first = load_study(str(path))
    assert identify(first, None).study.name == "my_simcse"  # nothing stored: the study itself
    storage = _stored(first, tmp_path)
    assert identify(load_study(str(path)), storage).reason == ""  # the same configuration: resume
    config = yaml.safe_load(path.read_text())
    config["base"]["max_steps"] = 6
    path.write_text(yaml.safe_dump(config))
    edited = identify(load_study(str(path)), storage)
    assert edited.study.name == "my_simcse--max_steps-6" and edited.study.derived_from == "my_simcse"
    assert "the YAML changed since this study ran here (max_steps 3 -> 6)" in edited.reason
    assert "--fresh would replace my_simcse's runs instead" in edited.reason
    assert identify(load_study(str(path)), storage, fresh=True).study.name == "my_simcse"
    overridden = identify(load_study(str(path), None, [parse_override(SET, "batch_size=8")]), storage)
    assert overridden.study.name == "my_simcse--batch_size-8--max_steps-6"  # against what ran here
    back = identify(load_study(str(path), None, [parse_override(SET, "max_steps=3")]), storage)
    assert back.study.name == "my_simcse"  # an override that restores what ran here resumes it


def test_a_derived_name_another_configuration_holds_gets_its_fingerprint(
    tmp_path: Path, tiny_bert: Path
) -> None:
    """Names say what differs from what ran here; two configurations can say the same (a value whose
    characters a name folds: org/m and org_m): the second gets its fingerprint, on every run alike."""
    path = own_study(tmp_path, tiny_bert)
    storage = _stored(load_study(str(path)), tmp_path)
    first = identify(load_study(str(path), None, [parse_override(SET, "model=org/m")]), storage)
    open_study(first.study, storage, create=True)
    second = load_study(str(path), None, [parse_override(SET, "model=org_m")])
    clash = identify(second, storage).study
    assert first.study.name == "my_simcse--model-org_m" and clash.name.startswith(first.study.name)
    assert (
        clash.name.endswith(second.fingerprint()[:8]) and identify(second, storage).study.name == clash.name
    )


def test_a_study_stored_before_configurations_were_gets_a_hashed_name(
    tmp_path: Path, tiny_bert: Path
) -> None:
    path = own_study(tmp_path, tiny_bert)
    storage = open_storage(str(tmp_path / "journal"))
    legacy = optuna.create_study(study_name="my_simcse.base", storage=storage)
    legacy.set_user_attr("fingerprint", "0" * 16)
    derived = identify(load_study(str(path)), storage)
    assert (
        derived.study.name.startswith("my_simcse--") and "predates recorded configurations" in derived.reason
    )


def test_the_best_configuration_is_chosen_on_its_seed_mean() -> None:
    study = optuna.create_study(direction="maximize")
    for temperature, seed, value in [(0.05, 1, 90.0), (0.05, 2, 70.0), (0.1, 1, 85.0), (0.1, 2, 84.0)]:
        study.add_trial(
            optuna.trial.create_trial(
                params={"temperature": temperature, "seed": seed},
                distributions={
                    "temperature": optuna.distributions.CategoricalDistribution([0.05, 0.1]),
                    "seed": optuna.distributions.CategoricalDistribution([1, 2]),
                },
                value=value,
            )
        )
    best = best_configuration(study)
    assert best is not None and best.params == {"temperature": 0.1}  # 84.5 on average, not the 90 of a seed
    assert best.trials == [2, 3] and best.seeds == [1, 2] and best.mean == pytest.approx(84.5)
    assert best.std == pytest.approx(0.7071, abs=1e-4)


def test_the_worker_command_carries_the_overrides(tmp_path: Path, tiny_bert: Path) -> None:
    from harness.study.workers import WorkerSettings

    study = load_study(str(own_study(tmp_path, tiny_bert)), None, [parse_override(SET, "max_steps=2")])
    settings = WorkerSettings(None, "sqlite:///x.db", tmp_path, 60, 1, False)
    assert settings.command(study, 1)[-3:] == ["--set", "max_steps=2", "--no-progress"]
    derived = identify(study, None).study  # a local worker runs the coordinator's study, not its own pick
    assert settings.command(derived, 1)[-4:] == ["max_steps=2", "--study-name", derived.name, "--no-progress"]


def _parents(name: str) -> list:
    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name(name)
    return tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")


@pytest.mark.slow
def test_edit_set_resume_report_and_fresh(tmp_path: Path, tiny_bert: Path) -> None:
    """The issue's second hour: run, edit a field, run (derived), again (resumes), --set (derived), report
    each, and --fresh leaves one parent."""
    path = own_study(tmp_path, tiny_bert)
    assert harness_here("run-study", str(path)).returncode == 0
    config = yaml.safe_load(path.read_text())
    config["base"]["max_steps"] = 4
    path.write_text(yaml.safe_dump(config))
    dry = harness_here("run-study", str(path), "--dry-run")
    assert "(max_steps 3 -> 4): running it as study my_simcse--max_steps-4" in dry.stdout
    edited = harness_here("run-study", str(path))
    assert edited.returncode == 0, edited.stderr
    assert "running it as study my_simcse--max_steps-4" in edited.stdout
    assert "study my_simcse--max_steps-4.base: 2 of 2 trial(s) complete" in edited.stdout
    again = harness_here("run-study", str(path))
    assert "evaluating" not in again.stdout and "2 of 2 trial(s) complete" in again.stdout  # resumed: done
    (parent,) = _parents("my_simcse--max_steps-4")
    assert parent.data.tags["derived_from"] == "my_simcse"
    assert parent.data.tags["derived.changes"] == "max_steps 3 -> 4"
    assert parent.data.tags["study.path"] == str(path)
    overridden = harness_here("run-study", str(path), "--set", "batch_size=8", "--search", "temperature=0.1")
    assert overridden.returncode == 0, overridden.stderr
    name = "my_simcse--batch_size-8--max_steps-4--temperature-0.1"
    assert f"study {name}.base: 1 of 1 trial(s) complete" in overridden.stdout
    assert "resume or finish later" not in overridden.stdout  # complete: nothing to resume
    given = [parse_override(SET, "batch_size=8"), parse_override(SEARCH, "temperature=0.1")]
    resumes = load_study(str(path), None, given).command(target=str(path))  # what a resume line would say
    assert resumes == f"harness run-study {path} --set batch_size=8 --search temperature=0.1"
    report = harness_here("report", name, "--no-pdf", "--out", str(tmp_path / "reports"))
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "reports" / name / "results.tex").is_file()
    assert (
        "A study derived from my\\_simcse: batch\\_size"
        in (tmp_path / "reports" / name / "report.tex").read_text()
    )
    origin = harness_here("report", "my_simcse", "--no-pdf", "--out", str(tmp_path / "reports"))
    assert "studies derived from my_simcse here (each its own report):" in origin.stdout
    assert (
        "  my_simcse--max_steps-4 (max_steps 3 -> 4): `harness report my_simcse--max_steps-4`"
        in origin.stdout
    )
    together = f"harness report my_simcse {name} my_simcse--max_steps-4"
    assert f"all in one table: `{together}`" in origin.stdout
    # the origin and a derived study in one table (issue 58 item 1), labelled by what differs
    baseline = ["--baseline", "max_steps=3, temperature=0.05"]
    out = ["--no-pdf", "--out", str(tmp_path / "reports")]
    joined = harness_here("report", "my_simcse", "my_simcse--max_steps-4", *out, *baseline)
    assert joined.returncode == 0, joined.stderr
    table = (tmp_path / "reports" / "my_simcse+my_simcse--max_steps-4" / "results.tex").read_text()
    labels = [line.split(" & ")[0] for line in table.splitlines() if line.startswith("max\\_steps = ")]
    assert sorted(labels) == [f"max\\_steps = {s}, temperature = {t}" for s in (3, 4) for t in (0.05, 0.1)]
    assert table.count("(paired) & ") == 3  # every other row against max_steps 3, temperature 0.05
    notes = (tmp_path / "reports" / "my_simcse+my_simcse--max_steps-4" / "report.tex").read_text()
    derived = "my\\_simcse-{}-max\\_steps-4: a study derived from my\\_simcse: "
    assert derived + "max\\_steps 3 -\\textgreater{} 4" in notes
    apart = harness_here("report", "my_simcse", "no_such_study", "--no-pdf", "--out", str(tmp_path / "x"))
    assert apart.returncode == 2 and not (tmp_path / "x").exists()
    listing = harness_here("studies").stdout
    assert f"  my_simcse  ({path}); finished here: base 2 of 2" in listing
    assert "derived: my_simcse--max_steps-4 (max_steps 3 -> 4); finished here: base 2 of 2" in listing
    fresh = harness_here("run-study", str(path), "--fresh")
    assert fresh.returncode == 0, fresh.stderr
    assert "--fresh: deleted the earlier MLflow runs of my_simcse (base): 1 study run(s), 2 trial run(s)" in (
        fresh.stdout
    )
    assert len(_parents("my_simcse")) == 1  # no look-alike parent beside the new one
    assert "running it as" not in fresh.stdout  # --fresh replaced the edited study itself


def test_fresh_deletes_this_studys_ended_runs_only(tmp_path: Path, tiny_bert: Path) -> None:
    """--fresh deletes the replaced study's runs and its earlier ended ones; a parent still RUNNING (a
    coordinator elsewhere) and the runs of another YAML with the same name stay."""
    from harness.study.fresh_start import retire_runs
    from harness.tracking.tracker import PARENT_TAG, ROLE_TAG

    study = load_study(str(own_study(tmp_path, tiny_bert)))
    tracker = Tracker()
    experiment = tracker.client.create_experiment(study.name)

    def parent(status: str, path: str) -> str:
        tags = {ROLE_TAG: "study", "profile": "base", "study.path": path}
        run = tracker.client.create_run(experiment, tags=tags).info.run_id
        tracker.client.create_run(experiment, tags={PARENT_TAG: run, ROLE_TAG: "trial"})
        tracker.client.set_terminated(run, status) if status != "RUNNING" else None
        return run

    replaced, earlier = parent("FINISHED", study.path), parent("KILLED", study.path)
    running, elsewhere = parent("RUNNING", study.path), parent("FINISHED", "/elsewhere/my_simcse.yaml")
    assert retire_runs(tracker, study, replaced) == (2, 2)
    stages = {
        r: tracker.client.get_run(r).info.lifecycle_stage for r in (replaced, earlier, running, elsewhere)
    }
    assert stages == {replaced: "deleted", earlier: "deleted", running: "active", elsewhere: "active"}


def test_a_dry_run_makes_no_storage_to_look_in(tmp_path: Path, tiny_bert: Path) -> None:
    path = own_study(tmp_path, tiny_bert)
    database = tmp_path / "optuna.db"
    result = harness_here(
        "run-study", str(path), "--set", "max_steps=2", "--dry-run", "--storage", f"sqlite:///{database}"
    )
    assert result.returncode == 0, result.stderr
    assert (
        "--set max_steps=2 changes the study (max_steps 3 -> 2): running it as study my_simcse--max_steps-2"
        in (result.stdout)
    )
    assert not database.exists() and not (tmp_path / ".harness").exists()
