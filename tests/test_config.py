import re
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.registry import get_method
from harness.resolve.run_spec import resolve_run
from harness.resolve.study_spec import STUDIES_DIR, load_study


def test_lambda_tau_sweep_profiles() -> None:
    paper = load_study("lambda_tau_sweep", "paper")
    assert paper.n_trials == 30 and paper.grid() == {
        "lambda": [0.1, 0.3, 0.5, 0.7, 0.9],
        "tau": [0.1, 0.3, 0.5, 0.7, 0.9, 1.0],
    }
    run = paper.resolve({"lambda": 0.3, "tau": 1.0})
    config = run.settings
    assert (run.params.lam, run.params.temperature, run.method.name) == (0.3, 1.0, "scl")
    assert (
        config.model,
        config.batch_size,
        config.lr,
        config.epochs,
        config.warmup_ratio,
        config.pooling,
    ) == ("google/bert_uncased_L-8_H-512_A-8", 64, 2e-5, 1, 0.1, "mean_no_cls")  # Liao 4.2, 3
    smoke = load_study("lambda_tau_sweep", "smoke")
    assert smoke.n_trials >= 4 and smoke.base["max_steps"] and smoke.base["train_data"] == "snli_local"
    assert smoke.resolve({"lambda": 0.1, "tau": 0.1}).flat()["lambda"] == 0.1


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return str(path)


BASE = "name: s\ndefault_profile: p\nprofiles: {p: {}}\n"


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        (BASE + "base: {batch_size: -1}\n", r"field 'batch_size': Input should be greater than 0"),
        (BASE + "base: {lambda: 2}\n", r"field 'lambda': Input should be less than or equal to 1"),
        (
            BASE + "base: {lamda: 0.5}\n",
            r"field 'lamda' is neither a run field nor a parameter of method 'scl'",
        ),
        (BASE + "search: {tau: [0.1, -1]}\n", r"field 'tau': Input should be greater than 0"),
        (BASE + "base: {method: scll}\n", r"unknown method 'scll'; did you mean scl"),
        (BASE + "sampler: random\n", r"field 'sampler'"),
        (
            "name: s\ndefault_profile: q\nprofiles: {p: {}}\n",
            r"default_profile 'q' is not one of the profiles \(p\)",
        ),
        ("name: [\n", r"not valid YAML"),
    ],
)
def test_invalid_yaml_names_the_field(tmp_path: Path, yaml_text: str, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        load_study(write(tmp_path, yaml_text))


def test_unknown_profile_and_study(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no profile 'gpu'; choose one of p"):
        load_study(write(tmp_path, BASE), "gpu")
    with pytest.raises(HarnessError, match=r"no study 'lambda_tau_swep'; did you mean lambda_tau_sweep\?"):
        load_study("lambda_tau_swep")


def test_registry_suggests_close_names() -> None:
    assert get_method("scl").name == "scl"
    with pytest.raises(HarnessError, match="did you mean sbert"):
        get_method("sbret")


def test_flat_config_holds_method_params() -> None:
    flat = resolve_run({"method": "scl", "lambda": 0.3, "tau": 0.7, "selection": "3p3n"}).flat()
    assert (flat["lambda"], flat["tau"], flat["selection"], flat["method"]) == (0.3, 0.7, "3p3n", "scl")


@pytest.mark.parametrize("path", sorted(STUDIES_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_study_yaml_validates_in_every_profile(path: Path) -> None:
    import yaml

    for profile in yaml.safe_load(path.read_text())["profiles"]:
        study = load_study(str(path), profile)  # validates every grid point
        assert study.n_trials >= 1


@pytest.mark.parametrize(
    ("search", "sampler", "message"),
    [
        ({"lr": {"low": 1e-3, "high": 1e-5}}, "tpe", "'lr': low 0.001 is above high 1e-05; swap them"),
        ({"lr": {"low": 0.0, "high": 1e-5, "log": True}}, "tpe", "'lr': a log range needs low > 0"),
        ({"lambda": []}, "grid", "'lambda' has an empty list; give at least one value"),
    ],
)
def test_a_bad_search_space_is_one_line(tmp_path: Path, search: dict, sampler: str, message: str) -> None:
    """Issue 11: a TPE range with low > high, or an empty grid list, is refused before anything runs."""
    import yaml

    from harness.resolve.study_spec import load_study

    config = {"name": "bad", "default_profile": "p", "sampler": sampler, "n_trials": 2, "search": search,
              "base": {"method": "scl", "model": "all-MiniLM-L6-v2"}, "profiles": {"p": {}}}  # fmt: skip
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(HarnessError, match=re.escape(message)):
        load_study(str(path))


def test_a_max_length_beyond_the_models_positions_is_refused(tiny_bert: Path) -> None:
    from harness.encoders.encoder import Encoder

    with pytest.raises(
        HarnessError, match="max sequence length 4096 is beyond .* 128 positions; give 128 or less"
    ):
        Encoder(str(tiny_bert), "mean", 4096)


SIMCSE = """name: my_simcse
base:
  method: unsup_simcse
  model: all-MiniLM-L6-v2
  contrastive_data: [wiki]
  max_steps: 5
  eval_every: 5
search:
  temperature: [0.05, 0.1]
"""


WRONG_FIELDS = [
    ("max_steps: 5", "max_step: 5", "field 'max_step' is neither a run field nor a parameter of method "
     "'unsup_simcse'; did you mean max_steps?"),
    ("  temperature:", "  temprature:", "; did you mean temperature?"),
    ("search:", "serach:", "s.yaml: unknown field 'serach'; did you mean search?"),
    ("search:", "profiles: {p: {bsae: {}}}\nsearch:", "unknown field 'profiles.p.bsae'; did you mean base?"),
    ("[0.05, 0.1]", "{low: 0.01, high: 0.1, lgo: true}",
     "unknown field 'search.temperature.lgo'; did you mean low, log?"),
    ("[wiki]", "[wikipedia]",
     "field 'contrastive_data[0]': Input should be one of 'wiki', 'sst', 'quora', 'sts', 'glue:CoLA'"),
    ("[wiki]", "[wikipedia]", "(got 'wikipedia'); did you mean wiki?"),
    ("[0.05, 0.1]", "0.05",
     "field 'search.temperature': give a list of values or a range {low, high} (got 0.05)"),
    ("[0.05, 0.1]", "{low: 0.01}", "field 'search.temperature.high' is missing; add it"),
    ("[0.05, 0.1]", "{low: 1, high: 2, int: maybe}",
     "field 'search.temperature.int': Input should be a valid boolean"),
    ("eval_every: 5", "eval_every: often", "field 'eval_every': give an integer or 'epoch' (got 'often')"),
    ("eval_every: 5", "eval_every: 0", "field 'eval_every': Input should be greater than 0 (got 0)"),
    ("eval_every: 5", "pooling: meen", "field 'pooling': Input should be 'model', 'cls'"),
    ("eval_every: 5", "pooling: meen", "(got 'meen'); did you mean mean?"),
]  # fmt: skip


@pytest.mark.parametrize(("old", "new", "message"), WRONG_FIELDS)
def test_a_wrong_field_is_named_as_written_with_the_fix(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    """Issue 41 item 3: close names for unknown fields and values; no pydantic union tags in the path."""
    assert old in SIMCSE
    with pytest.raises(HarnessError) as error:
        load_study(write(tmp_path, SIMCSE.replace(old, new, 1)))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_the_paper_defaults_note_says_what_the_generic_pooling_is() -> None:
    run = resolve_run({"method": "unsup_simcse", "model": "all-MiniLM-L6-v2"})
    assert run.paper_defaults_note().startswith(
        "pooling=cls_before_pooler (not model: the model's own sentence-transformers pooling, e.g. MiniLM's "
        "mean + normalise), lr=3e-05 (not 2e-05)"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("  max_steps: 5", "   max_steps: 5", "s.yaml:7:4: not valid YAML: expected <block end>, but found "
         "'<block mapping start>' (check the indentation of that line)"),
        ("[wiki]", "[wiki", "s.yaml:7:12: not valid YAML: expected ',' or ']', but got ':' (close the '[' "
         "opened at 6:21, or put a ',' between its items)"),
        ("  max_steps: 5", "\tmax_steps: 5", "s.yaml:7:1: not valid YAML: found character '\\t' that cannot "
         "start any token (indent with spaces, not tabs)"),
    ],
)  # fmt: skip
def test_a_yaml_error_names_line_column_and_fix(tmp_path: Path, old: str, new: str, message: str) -> None:
    """Issue 41 item 4: where PyYAML stopped, 1-based as editors count, and what usually fixes it."""
    import yaml

    from harness.errors import yaml_error

    text = SIMCSE.replace("name: my_simcse\n", "name: my_simcse\ndescription: d\n").replace(old, new)
    with pytest.raises(yaml.YAMLError) as error:
        yaml.safe_load(text)
    assert str(yaml_error(tmp_path / "s.yaml", error.value)) == f"{tmp_path}/{message}"
