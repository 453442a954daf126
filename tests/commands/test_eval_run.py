"""`harness eval`: the JSON shape, the per-item record beside it and in MLflow, the cache, and nothing
written on bad data, on an interrupt or on a failed write."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.commands.eval_run import items_path, write_json
from harness.encoders.encoder import Encoder
from harness.evaluate.encode import EmbeddingCache, fingerprint
from harness.evaluate.suite import SentenceEncoder, flat_metrics
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, item_rows, read_items
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import harness_here


@pytest.mark.slow
def test_eval_json_and_mlflow(tiny_bert: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = harness_here(
        "eval",
        "--model",
        str(tiny_bert),
        "--tasks",
        "STS12,STSBenchmark,MRPC,AlignUniform",
        "--json",
        str(out),
        "--mlflow",
        "--precision",
        "fp32",
        "--no-progress",
    )
    assert result.returncode == 0, result.stderr
    written = json.loads(out.read_text())
    data, settings = written["results"], written["settings"]
    assert set(data) == {"STS12", "STSBenchmark", "MRPC", "AlignUniform"}
    hardware = settings["hardware"]
    assert settings["precision"] == hardware["precision"] == "fp32" and hardware["cpu.model"]
    where = hardware.get("gpu") or hardware["cpu.model"]  # the GPU's name on a CUDA machine
    assert f"fp32 on {hardware['device']} ({where}, {hardware['cpu.capability']}" in result.stdout
    assert {"spearman", "spearman_mean", "spearman_wmean", "pearson", "subsets"} <= set(data["STS12"])
    assert len(data["STS12"]["subsets"]) == 5 and data["STSBenchmark"]["n"] == 1379
    assert {"acc", "f1", "devacc"} <= set(data["MRPC"])
    assert "STS12" in result.stdout and "MRPC" in result.stdout
    parts = settings["seconds_by_part"]  # the encoding once, then each task's scoring, in the tasks' order
    assert list(parts) == ["encode", "STS12", "STSBenchmark", "MRPC", "AlignUniform"]
    assert all(v >= 0 for v in parts.values()) and sum(parts.values()) <= settings["seconds"] + 0.1
    assert f"time: encode {parts['encode']:.1f} s, STS12" in result.stdout
    tracker = Tracker()
    runs = tracker.client.search_runs([tracker.client.get_experiment_by_name("eval").experiment_id])
    assert len(runs) == 1 and runs[0].info.status == "FINISHED"
    for name in ("precision", "cpu.model", "cpu.capability", "cpu.native_bf16", "cpu.threads"):
        assert runs[0].data.tags[name] == hardware[name]
    metrics = metrics_of(runs[0])
    assert metrics["STS12.spearman"] == pytest.approx(data["STS12"]["spearman"])
    assert metrics["MRPC.f1"] == pytest.approx(data["MRPC"]["f1"])
    assert metrics["AlignUniform.uniformity"] == pytest.approx(data["AlignUniform"]["uniformity"])
    assert metrics["seconds.MRPC"] == parts["MRPC"] and "seconds_by_part" not in runs[0].data.params
    # the files it read, with their sha256, in the JSON and as the run's dataset inputs
    read = {row["path"] for row in settings["data_files"]}
    assert {"senteval/MRPC/msr_paraphrase_test.txt", "senteval/STS/STSBenchmark/sts-test.csv"} <= read
    assert len([p for p in read if p.startswith("senteval/STS/STS12-en-test/")]) == 10
    inputs = tracker.get_run(runs[0].info.run_id).inputs.dataset_inputs
    assert {i.dataset.name for i in inputs} >= {"senteval/MRPC", "senteval/STS/STS12-en-test"}
    # the per-item record beside the JSON (r.items.parquet) and in the run: every score given back
    beside = tmp_path / "r.items.parquet"
    assert f"results written to {out} (per-item predictions: {beside})" in result.stdout
    record = read_items(beside)
    assert list(record.task.unique()) == ["STS12", "STSBenchmark", "MRPC"]  # AlignUniform has none
    logged = flat_metrics(data)
    for name, value in point_scores(record).items():
        assert value == (logged[name] if name.startswith("MRPC") else pytest.approx(logged[name], abs=1e-9))
    stored = read_items(
        Path(tracker.client.download_artifacts(runs[0].info.run_id, ARTIFACT, str(tmp_path / "d")))
    )
    assert stored.equals(record)
    _check_stsb_apart_from_the_scoring(tiny_bert, settings, data["STSBenchmark"], record)


def _check_stsb_apart_from_the_scoring(model: Path, settings: dict, scores: dict, record: object) -> None:
    """Issue 43: STS-B's scores worked out apart from harness's scoring: the test file read here, each
    pair's torch cosine of the model's embeddings (same pooling and length), scipy's Spearman and Pearson
    of those cosines against the gold scores x 100; the record's predictions are those cosines and its
    gold those scores, so a record and a score both off (dot products, not cosines) fail."""
    import torch.nn.functional as F
    from scipy.stats import pearsonr, spearmanr

    path = Path(settings["data_dir"]) / "senteval" / "STS" / "STSBenchmark" / "sts-test.csv"
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = np.array([float(row[4]) for row in rows])
    encode = SentenceEncoder(Encoder(str(model), settings["pooler"], settings["max_length"]).eval())
    vectors = encode(sorted({row[i] for row in rows for i in (5, 6)}))
    first, second = (torch.from_numpy(np.stack([vectors[row[i]] for row in rows])) for i in (5, 6))
    cosines = F.cosine_similarity(first.double(), second.double(), dim=-1).numpy()
    assert scores["n"] == len(gold) == 1379
    assert scores["spearman"] == pytest.approx(100 * spearmanr(cosines, gold).statistic, abs=1e-4)
    assert scores["pearson"] == pytest.approx(100 * pearsonr(cosines, gold).statistic, abs=1e-4)
    stsb = record[record.task == "STSBenchmark"]  # type: ignore[attr-defined]
    np.testing.assert_array_equal(stsb.gold.to_numpy(), gold)
    np.testing.assert_allclose(stsb.prediction.to_numpy(), cosines, atol=1e-5)


def test_malformed_data_writes_no_json_and_no_run(tiny_bert: Path, tmp_path: Path, data_dir: Path) -> None:
    broken = tmp_path / "data" / "senteval" / "STS" / "STS12-en-test"
    broken.mkdir(parents=True)
    (broken / "STS.input.x.txt").write_text("a\tb\nc\td\n")
    (broken / "STS.gs.x.txt").write_text("1.0\nabc\n")
    out = tmp_path / "r.json"
    result = harness_here(
        "eval",
        "--model",
        str(tiny_bert),
        "--tasks",
        "STS12",
        "--data-dir",
        str(tmp_path / "data"),
        "--json",
        str(out),
        "--mlflow",
        "--no-progress",
    )
    assert result.returncode == 2
    assert "STS.gs.x.txt:2: score 'abc' is not a number" in result.stderr
    assert not out.exists() and not items_path(out).exists()
    experiment = Tracker().client.get_experiment_by_name("eval")
    assert experiment is None or not Tracker().client.search_runs([experiment.experiment_id])


def test_cache_returns_the_same_vectors_without_encoding(tiny_bert: Path, tmp_path: Path) -> None:
    encoder = Encoder(str(tiny_bert)).eval()
    cache = EmbeddingCache(tmp_path / "cache")
    first = SentenceEncoder(encoder, cache=cache)(["a b", "c d e"])
    calls = []
    encoder.register_forward_hook(lambda *args: calls.append(1))
    again = SentenceEncoder(encoder, cache=cache)(["c d e", "a b"])
    assert not calls
    np.testing.assert_array_equal(first["a b"], again["a b"])
    SentenceEncoder(encoder, cache=cache)(["a new one"])
    assert len(calls) == 1
    before = fingerprint(encoder, pooling="mean")
    with torch.no_grad():
        next(encoder.parameters()).add_(1e-3)
    assert fingerprint(encoder, pooling="mean") != before


@pytest.mark.slow
def test_an_interrupted_eval_writes_nothing_and_does_not_promise_a_resume(
    tiny_bert: Path, tmp_path: Path, harness_home: Path
) -> None:
    """Ctrl-C after the scores are printed, before the JSON and the MLflow run are written: neither is
    written, the exit code is 130 and the last line says `interrupted` (a re-run starts over, so it is not
    told to resume as a study is)."""
    import signal
    import time

    from harness.fleet.signals import INTERRUPTED_EXIT
    from tests.launcher import launch

    out = tmp_path / "r.json"
    args = [
        "eval",
        "--model",
        str(tiny_bert),
        "--tasks",
        "STS12",
        "--json",
        str(out),
        "--mlflow",
        "--no-progress",
    ]
    proc = launch(args, tmp_path / "eval.log", {"HARNESS_PAUSE_AT": "eval_scored=60"})
    deadline = time.monotonic() + 120
    while "STS12 " not in proc.output():
        assert proc.poll() is None and time.monotonic() < deadline, proc.output()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    said = proc.output()
    assert proc.returncode == INTERRUPTED_EXIT, said
    assert said.strip().splitlines()[-1] == "interrupted" and "Traceback" not in said
    assert not out.exists() and not items_path(out).exists() and not list(tmp_path.glob("*.tmp"))
    assert not list(tmp_path.glob(".*.tmp"))  # nor a half-written record
    tracker = Tracker()
    assert tracker.client.get_experiment_by_name("eval") is None or not tracker.client.search_runs(
        [tracker.client.get_experiment_by_name("eval").experiment_id]
    )


def test_a_failed_json_write_leaves_neither_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record is written first, the JSON last: a JSON that cannot be written takes its record (and
    every temporary file) with it, so a JSON on disk always has its record beside it."""
    record = item_rows("STSBenchmark", "sts", [0.1, 0.5, 0.9], [1.0, 2.0, 3.0])
    out = tmp_path / "r.json"
    write_json({"STSBenchmark": {"spearman": 100.0}}, {}, str(out), record)
    assert read_items(items_path(out)).equals(record) and out.exists()
    out.unlink()
    items_path(out).unlink()

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_json({"STSBenchmark": {"spearman": 100.0}}, {}, str(out), record)
    assert not list(tmp_path.iterdir())
