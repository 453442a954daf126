"""The command line: one-line errors, non-zero exits, nothing written on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import harness, harness_here


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["run-study", "lambda_tau_swep"],
            "error: no study 'lambda_tau_swep'; did you mean lambda_tau_sweep?",
        ),
        (["run-study", "lambda_tau_sweep", "--profile", "gpu"], "error: "),
        (
            ["run-study", "lambda_tau_sweep", "--profile", "paper"],
            "error: cannot load model 'google/bert_uncased_L-8_H-512_A-8'",
        ),
        (["run-study", "lambda_tau_sweep", "--data-dir", "/no/such"], "error: data directory /no/such"),
        (["report", "lambda_tau_sweep"], "error: no MLflow store at "),
        (["report"], "error: name a STUDY (or several) or give --all"),
        (["report", "lambda_tau_sweep", "--all"], "error: name a STUDY (or several) or give --all"),
        # issue 11 item 3
        (["run-study", "{nonutf8}"], "error: {nonutf8}: not UTF-8 text (byte 8); save it as UTF-8"),
        (["eval", "--model", "all-MiniLM-L6-v2", "--device", "nonsense"], "error: unknown device 'nonsense'"),
        (["eval", "--model", "/no/such/model"], "error: model '/no/such/model': no such directory"),
        (["run-study", "lambda_tau_sweep", "--tracking-uri", "foo://bar"], "error: tracking URI 'foo://bar'"),
        (["run-study", "lambda_tau_sweep", "--profile", "smoke", "--storage", "postgresql://u:secret@127.0.0.1:9/d"],
         "error: cannot open Optuna storage postgresql://u:***@127.0.0.1:9/d: (psycopg2.OperationalError) "),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(
    harness_home: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    nonutf8 = tmp_path / "nonutf8.yaml"
    nonutf8.write_bytes(b"name: x\n\xff\xfe bad: 1\n")
    result = harness_here(*[a.format(nonutf8=nonutf8) for a in args], env={"HF_HUB_OFFLINE": "1"})
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and lines[0].startswith(message.format(nonutf8=nonutf8)), result.stderr
    assert "secret" not in result.stderr + result.stdout  # a password never printed
    assert not (harness_home / "optuna.journal").exists() and not (harness_home / "mlflow.db").exists()
    assert not (Path.cwd() / "reports" / "build" / ".lambda_tau_sweep.old").exists()


SMOKE = ["run-study", "lambda_tau_sweep", "--profile", "smoke"]


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (SMOKE, {"HARNESS_HOME": "/sys/harness-test"},
         "error: cannot create /sys/harness-test for the harness home: Operation not permitted; set "),
        (SMOKE, {"HARNESS_HOME": "{file}"},
         "error: cannot use {file} for the harness home: a file is in the way"),
        ([*SMOKE, "--storage", "{file}/optuna.journal"], {},
         "error: cannot use {file} for the Optuna storage: a file is in the way; give --storage a "),
        ([*SMOKE, "--tracking-uri", "http://127.0.0.1:9"], {},
         "error: MLflow server http://127.0.0.1:9 is not reachable ([Errno 111] Connection refused); "),
        (SMOKE, {"HARNESS_STORAGE": "postgresql+psycopg2://u:secret@127.0.0.1:9/d"},  # --storage's default
         "error: cannot open Optuna storage postgresql+psycopg2://u:***@127.0.0.1:9/d: (psycopg2."),
        ([*SMOKE, "--workers", "0"], {},
         "error: --workers 0 (workers started elsewhere) needs a storage with"),
        (["run-study", "{noweights}"], {},
         "error: model directory {model} has no weights (model.safetensors, "),
        (["run-study", "{emptyset}"], {},
         "error: the training set is empty: no SNLI groups in snli_local splits []"),
        (["worker", "lambda_tau_sweep", "--profile", "smoke"], {}, "error: no Optuna journal at "),
        (["eval", "--model", "all-MiniLM-L6-v2", "--max-seq-length", "100000"], {},
         "error: max sequence length 100000 is beyond 'all-MiniLM-L6-v2''s 512 positions; give 512 or less"),
    ],
)  # fmt: skip
def test_unusable_places_and_inputs_are_one_line_before_anything_is_written(
    harness_home: Path, tmp_path: Path, tiny_bert: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    """Issue 11 item 3: each is refused in one line, exit 2, before a store, journal or run exists."""
    import shutil

    from tests.helpers import tiny_study

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    model = tmp_path / "no-weights"
    shutil.copytree(tiny_bert, model)
    for weights in model.glob("*.safetensors"):
        weights.unlink()
    names = {
        "file": str(blocker),
        "model": str(model),
        "noweights": tiny_study(tmp_path, model, {"lambda": [0.5]}, name="noweights"),
        "emptyset": tiny_study(tmp_path, tiny_bert, {"lambda": [0.5]}, name="emptyset", snli_splits=[]),
    }
    env = {k: v.format(**names) for k, v in env.items()}
    result = harness_here(*[a.format(**names) for a in args], env={"HF_HUB_OFFLINE": "1", **env})
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(message.format(**names)), result.stderr
    assert not (harness_home / "optuna.journal").exists() and not (harness_home / "mlflow.db").exists()


def test_a_report_folder_gets_the_usual_permissions(tmp_path: Path) -> None:
    """Staged folders (reports, exports) are not left at mkdtemp's 0700."""
    from harness.errors import HarnessError
    from harness.staging import staging_dir

    folder = staging_dir(tmp_path / "reports", ".x-", "the report")
    assert folder.stat().st_mode & 0o777 == 0o777 & ~_umask()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(HarnessError, match="a-file for the report: a file is in the way; give --out"):
        staging_dir(tmp_path / "a-file", ".x-", "the report")


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_methods_and_studies_are_listed() -> None:
    methods = harness("methods").stdout
    assert "scl" in methods and "sbert" in methods
    scl = methods.split("\nscl\n")[1].split("\n\n")[0]
    assert any(line.split()[:2] == ["lambda", "0.5"] for line in scl.splitlines())  # one field a line
    stage_kinds = methods.split("stage kinds")[1]
    for kind in ("contrastive", "finetune", "fusion", "repeat", "combiner"):
        assert kind in stage_kinds
    assert all(f"\n{name}: " in methods for name in ("sts", "multitask", "ensemble"))  # objectives
    studies = harness("studies").stdout
    assert "lambda_tau_sweep" in studies and "trials: paper 30, smoke* 4" in studies


@pytest.mark.slow
def test_a_study_whose_trials_fail_exits_non_zero_and_says_how_to_rerun(
    tmp_path: Path, tiny_bert: Path
) -> None:
    """Issue 11 item 2: a learning rate that makes every trial diverge; the run says so."""
    from harness.tracking.tracker import Tracker
    from tests.helpers import tiny_study

    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.9]}, name="all-fail", max_steps=4, lr=1.0e12)
    result = harness_here("run-study", path, "--no-progress")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert sum(" failed: " in line for line in lines) == 2
    rerun = f"`harness run-study {path} --profile tiny --retry-failed`"
    assert lines[-1] == f"2 trial(s) failed, 0 skipped; fix the cause, then re-run them with {rerun}"
    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name("all-fail")
    (parent,) = tracker.client.search_runs([experiment.experiment_id], "tags.`harness.role` = 'study'")
    assert parent.info.status == "FAILED" and parent.data.tags["outcome"] == "partial: 2 trial(s) failed"


@pytest.mark.parametrize(
    ("yaml_text", "kind"),
    [
        ('name: ".."\nbase: {method: scl}\n', "study name '..'"),
        ("name: ok\nprofiles:\n  a/b: {}\n", "profile name 'a/b'"),
        ("name: ok\nvariants:\n  ../v: {lambda: 0.5}\n", "variant name '../v'"),
    ],
)
def test_names_that_become_paths_are_refused_in_one_line(tmp_path: Path, yaml_text: str, kind: str) -> None:
    """Issue 26 item 5: study, profile and variant names become folders, experiments and study names."""
    path = tmp_path / "study.yaml"
    path.write_text(yaml_text)
    result = harness_here("run-study", str(path), "--dry-run")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line == f"error: {path}: {kind} is not a plain name: use letters, digits, '_', '-' and '.' " + (
        "(not '.' or '..' alone)"
    )


@pytest.mark.parametrize("args", [["report", ".."], ["export", "../x", "--out", "out"]])
def test_a_study_argument_that_is_a_path_is_refused(tmp_path: Path, args: list[str]) -> None:
    result = harness_here(*args)
    assert result.returncode == 2 and result.stderr.startswith(
        f"error: study name '{args[1]}' is not a plain"
    )
    assert not (Path.cwd() / "out").exists()


def test_a_plain_path_tracking_uri_is_a_sqlite_file_or_one_line(tmp_path: Path, harness_home: Path) -> None:
    """Issue 26 item 5: `x.db` is the sqlite store it names; a folder (MLflow's file store, which MLflow 3
    refuses with a traceback) gets one line saying which URI to give."""
    from harness.places import resolve_tracking_uri

    assert resolve_tracking_uri(str(tmp_path / "runs.db")) == f"sqlite:///{tmp_path / 'runs.db'}"
    result = harness_here(*SMOKE, "--tracking-uri", str(tmp_path / "mlruns"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: tracking URI '{tmp_path / 'mlruns'}' is a folder: ")
    assert f"give sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}" in line
    assert not (tmp_path / "mlruns").exists() and not (harness_home / "optuna.journal").exists()


def test_report_of_a_study_never_run_writes_nothing(harness_home: Path, tmp_path: Path) -> None:
    """Issue 26 item 5: a store with runs of other studies, a report of one never run: one line, exit 2,
    and no folder made (not reports/, not reports/build/)."""
    from harness.tracking.tracker import Tracker

    Tracker().experiment_id("some_other_study")
    out = tmp_path / "reports" / "build"
    result = harness_here("report", "lambda_tau_sweep", "--out", str(out))
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "lambda_tau_sweep" in line and "run" in line, line
    assert not (tmp_path / "reports").exists()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["ui", "dashboard"])
def test_a_server_on_a_taken_port_is_refused_in_one_line(command: str, tmp_path: Path) -> None:
    """An earlier `harness ui` still on the port would keep answering (over another store): say so."""
    import socket

    import optuna

    from harness.study.optuna_study import open_storage

    optuna.create_study(study_name="s", storage=open_storage(str(tmp_path / "j.journal")))
    from harness.tracking.tracker import Tracker

    Tracker()  # the store `ui` serves (it makes none of its own)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        extra = ["--storage", str(tmp_path / "j.journal")] if command == "dashboard" else []
        result = harness_here(command, "--port", port, *extra)
    assert result.returncode == 2, result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line.startswith("error: cannot start ") and f"on 127.0.0.1:{port}: Address already in use" in line


@pytest.mark.parametrize(
    ("args", "fix"),
    [
        (["report", "lamda_tau_sweep"], "did you mean lambda_tau_sweep?"),
        (["export", "lamda_tau_sweep", "--out", "out"], "did you mean lambda_tau_sweep?"),
        (["report", "my_onw_study"], "did you mean my_own_study?"),
        (["report", "lambda_tau_sweep"], "run `harness run-study lambda_tau_sweep` first"),
        (["report", "zzz"], "studies with runs here: my_own_study"),
    ],
)
def test_a_misspelt_study_gets_the_name_meant(harness_home: Path, args: list[str], fix: str) -> None:
    """Issue 41 item 3: close names over the store's experiments and studies/; running a study is
    suggested only where its study file exists."""
    from harness.tracking.tracker import Tracker

    Tracker().experiment_id("my_own_study")
    result = harness_here(*args)
    assert result.returncode == 2
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert line == f"error: no MLflow experiment {args[1]!r} at sqlite:///{harness_home}/mlflow.db; {fix}"


@pytest.mark.parametrize("command", ["run-study", "eval"])
def test_a_model_the_hub_cannot_serve_is_one_line_at_once(tmp_path: Path, command: str) -> None:
    """Issue 41 item 3: the hub asked once (closed here), not huggingface_hub's ~26 s of retries."""
    import time

    import harness.commands.eval_run  # noqa: F401 (its torch imports are not what is timed)
    from tests.services import free_port

    study = tmp_path / "s.yaml"
    study.write_text(
        "name: s\nbase: {method: unsup_simcse, model: sentence-transformers/foo-bar, max_steps: 1}\n"
    )
    args = [str(study)] if command == "run-study" else ["--model", "sentence-transformers/foo-bar"]
    endpoint = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = harness_here(
        command, *args, env={"HF_ENDPOINT": endpoint, "HF_HUB_OFFLINE": "", "TRANSFORMERS_OFFLINE": ""}
    )
    assert result.returncode == 2 and time.monotonic() - started < 5
    (line,) = result.stderr.splitlines()
    assert line == (
        f"error: cannot load model 'sentence-transformers/foo-bar': not in the local hub cache and the hub "
        f"({endpoint}) is not reachable ([Errno 111] Connection refused); use a local directory or "
        "all-MiniLM-L6-v2 offline, or set HF_HUB_OFFLINE=1"
    )


MY_SIMCSE = """name: my_simcse
base:
  method: unsup_simcse
  model: all-MiniLM-L6-v2
  contrastive_data: [wiki]
  max_steps: 5
  final_tasks: [STSBenchmark]
search:
  temperature: [0.05, 0.1]
"""


@pytest.mark.parametrize(
    ("old", "new", "args", "message"),
    [
        ("max_steps: 5", "max_step: 5", [],
         "error: study my_simcse (base): field 'max_step' is neither a run field nor a parameter of method "
         "'unsup_simcse'; did you mean max_steps?"),
        ("search:", "serach:", [], "error: {path}: unknown field 'serach'; did you mean search?"),
        ("", "", ["--eval", "STSB"],
         "error: study my_simcse (base): field 'final_tasks': unknown task 'STSB'; "
         "did you mean STSBenchmark?"),
        ("[wiki]", "[wikipedia]", [],
         "error: study my_simcse (base): field 'contrastive_data[0]': Input should be one of 'wiki', 'sst', "
         "'quora', 'sts', 'glue:CoLA', 'glue:SST-2', 'glue:MRPC', 'glue:STS-B', 'glue:QNLI', 'glue:RTE', "
         "'glue:WNLI', 'glue:QQP', 'glue:MNLI' (got 'wikipedia'); did you mean wiki?"),
        ("[0.05, 0.1]", "0.05", [],
         "error: {path}: field 'search.temperature': give a list of values or a range {{low, high}} "
         "(got 0.05)"),
    ],
)  # fmt: skip
def test_a_wrong_own_study_is_one_line_naming_the_fix(
    tmp_path: Path, old: str, new: str, args: list[str], message: str
) -> None:
    """Issue 41 item 3, the README's own study misspelt: the close names, the field's place as written."""
    path = tmp_path / "my_simcse.yaml"
    path.write_text(MY_SIMCSE.replace(old, new, 1))
    result = harness_here("run-study", str(path), "--dry-run", *args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [message.format(path=path)]


def test_a_study_yaml_error_names_line_column_and_fix(tmp_path: Path) -> None:
    """Issue 41 item 4: `   max_steps: 5` (three spaces) under base."""
    path = tmp_path / "e5.yaml"
    path.write_text(MY_SIMCSE.replace("  max_steps: 5", "   max_steps: 5"))
    result = harness_here("run-study", str(path), "--dry-run")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"error: {path}:6:4: not valid YAML: expected <block end>, but found '<block mapping start>' (check "
        "the indentation of that line)"
    ]


def test_ui_without_a_store_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`harness ui` run in a folder with no store above makes no empty one: it says where it looked."""
    monkeypatch.delenv("HARNESS_HOME")
    monkeypatch.chdir(tmp_path)
    result = harness_here("ui", "--port", "1")
    assert result.returncode == 2 and not (tmp_path / ".harness").exists()
    assert result.stderr.strip() == (
        f"error: no .harness/ store here or above {tmp_path.resolve()}; run a study first, run this where "
        "one ran (or in a folder below), or give --tracking-uri"
    )


def test_small_mistakes_get_the_line_that_fixes_them() -> None:
    """Issue 58 item 7: `--set FIELD VALUE` is explained, another tool's field name finds the harness's,
    and an unreachable tracking server is told to start on its own port."""
    spaced = harness_here("run-study", "lambda_tau_sweep", "--set", "max_steps", "10")
    assert spaced.returncode == 2
    assert "--set max_steps: write --set FIELD=VALUE, one word (e.g. --set max_steps=10)" in spaced.stderr
    other_name = harness_here("run-study", "lambda_tau_sweep", "--set", "learning_rate=2e-5", "--dry-run")
    assert other_name.returncode == 2 and "did you mean lr?" in other_name.stderr
    away = harness_here("run-study", "lambda_tau_sweep", "--tracking-uri", "http://127.0.0.1:5999")
    assert away.returncode == 2 and "--port 5999`" in away.stderr
