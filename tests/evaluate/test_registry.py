"""The evaluation-task registry: a task registered here, in a test file, is evaluated by `harness eval
--tasks` without touching any other module; aggregates keep their declared members."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from harness.commands.cli import cli
from harness.data.senteval import STSPairs
from harness.encoders.encoder import Encoder
from harness.errors import HarnessError
from harness.evaluate.encode import encode
from harness.evaluate.registry import ScoreOptions, aggregates, get_task, register_task, tasks
from harness.evaluate.suite import flat_metrics, resolve_tasks
from harness.evaluate.tasks.sts import cosine, load_sts_task, pair_sentences

TASK = "STSBenchmark-dev-head"


def mean_gold_pair_cosine(subsets: tuple[STSPairs, ...], embeddings: dict, options: ScoreOptions) -> dict:
    """A score no built-in task computes: the mean cosine of the pairs."""
    pairs = subsets[0]
    left = np.stack([embeddings[s] for s in pairs.sent1])
    right = np.stack([embeddings[s] for s in pairs.sent2])
    return {"mean_cosine": float(cosine(left, right).mean()), "n": len(pairs)}


@register_task(TASK, kind="sts", sentences=pair_sentences, scorer=mean_gold_pair_cosine,
               main_score="mean_cosine", splits=("dev",), description="first 50 STS-B dev pairs")  # fmt: skip
def first_pairs(data_dir: Path, variant: str) -> tuple[STSPairs, ...]:
    dev = load_sts_task(data_dir, "STSBenchmark", variant, "dev")[0]
    return (STSPairs(dev.name, dev.sent1[:50], dev.sent2[:50], dev.scores[:50]),)


@pytest.mark.slow
def test_a_task_registered_in_a_test_file_runs_through_harness_eval(
    tiny_bert: Path, tmp_path: Path, data_dir: Path
) -> None:
    out = tmp_path / "r.json"
    args = ["eval", "--model", str(tiny_bert), "--tasks", f"{TASK},STS12", "--json", str(out),
            "--precision", "fp32", "--no-progress", "--no-cache"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text())["results"]
    pairs = first_pairs(data_dir, "senteval")[0]
    embeddings = encode(Encoder(str(tiny_bert), "mean", None), [*pairs.sent1, *pairs.sent2])
    expected = mean_gold_pair_cosine((pairs,), embeddings, ScoreOptions())["mean_cosine"]
    assert scores[TASK]["n"] == 50 and scores[TASK]["mean_cosine"] == pytest.approx(expected, abs=1e-5)
    assert TASK in CliRunner().invoke(cli, ["tasks"]).output


def test_aggregates_keep_their_declared_members() -> None:
    results = {
        name: {"spearman": 10.0 * i, "mean_cosine": 0.5}
        for i, name in enumerate(aggregates()["STS.avg"].members)
    }
    results[TASK] = {"spearman": 1000.0}  # a newly registered sts task does not join STS.avg
    assert flat_metrics(results)["STS.avg"] == pytest.approx(30.0)
    assert tasks()[TASK].aggregates == () and tasks()["STS12"].aggregates == ("STS.avg", "STS12-16.wmean")
    assert "STS12-16.wmean" not in flat_metrics(results)  # no member has its score
    wmean = {f"STS1{y}": {"spearman_wmean": float(y)} for y in range(2, 7)}
    assert flat_metrics(wmean)["STS12-16.wmean"] == pytest.approx(4.0)
    del wmean["STS16"]  # a mean over four years is not Liao's average of five: no value at all
    assert "STS12-16.wmean" not in flat_metrics(wmean)


def test_transfer_avg_is_the_mean_test_accuracy_and_counts_are_not_logged() -> None:
    """transfer.avg: the mean of the eight tasks' test `acc` (SentEval's reported column, SimCSE Table
    2's Avg.), not their dev accuracies; an item count `n` is no score and is not logged."""
    members = aggregates()["transfer.avg"].members
    results = {name: {"acc": 80.0 + i, "devacc": 50.0, "n": 1000} for i, name in enumerate(members)}
    flat = flat_metrics(results)
    assert len(members) == 8 and flat["transfer.avg"] == pytest.approx(83.5)
    assert flat["MR.acc"] == 80.0 and flat["MR.devacc"] == 50.0
    assert not [name for name in flat if name.endswith(".n")]


def test_task_names_are_checked() -> None:
    assert resolve_tasks(None, "sts")[0] == "STS12"
    assert "AlignUniform" in resolve_tasks(None, "full")
    with pytest.raises(HarnessError, match="did you mean STS12"):
        resolve_tasks("STS-12")
    with pytest.raises(HarnessError, match="no task given"):
        resolve_tasks("")
    with pytest.raises(HarnessError, match="unknown suite 'nope'; choose one of sts, quick, transfer, full"):
        resolve_tasks(None, "nope")


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("STSB", "did you mean STSBenchmark?"),
        ("sts-b", "did you mean STSBenchmark?"),
        ("STS_B", "did you mean STSBenchmark?"),
        ("sickr", "did you mean SICKRelatedness?"),
        ("sick", "did you mean SICKRelatedness?"),
        ("sts12", "did you mean STS12?"),
        ("STSBenchmark-test", "did you mean STSBenchmark?"),
        ("sst-2", "did you mean SST2?"),
    ],
)
def test_a_misspelt_task_gets_the_task_meant(name: str, hint: str) -> None:
    """Issue 41 item 3: case, '-' and '_', the report's short names (STS-B) and prefixes find the task."""
    with pytest.raises(HarnessError) as error:
        get_task(name)
    assert str(error.value) == f"unknown task {name!r}; {hint}"


def test_a_misspelt_suite_gets_the_suite_meant() -> None:
    with pytest.raises(
        HarnessError, match=r"^unknown suite 'quik'; did you mean quick\? \(see `harness tasks`\)$"
    ):
        resolve_tasks(None, "quik")
