"""Issue 12: the stage cache. Entries round-trip and are checked; concurrent trials train a stage once;
a study whose trials share pre-training gives bit-identical metrics with and without the cache."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.train.stage_cache import StageCache, StageState, capture_rng
from tests.helpers import child_runs, harness_here


def _state(seed: int = 0) -> StageState:
    torch.manual_seed(seed)
    np.random.seed(seed)
    return StageState({"encoder.w": torch.randn(3, 4)}, None, 7, 0.5, 6, capture_rng(), "run-1", "a, b")


def test_an_entry_round_trips_with_its_rng_state(tmp_path: Path) -> None:
    cache = StageCache(tmp_path)
    stored = _state()
    assert cache.store("ab" * 32, stored, {"what": "test"})
    assert not cache.store("ab" * 32, _state(1), {})  # the first writer's entry is kept
    loaded = cache.load("ab" * 32)
    assert loaded is not None and loaded.step == 7 and loaded.best == 0.5 and loaded.best_step == 6
    assert torch.equal(loaded.tensors["encoder.w"], stored.tensors["encoder.w"])
    assert torch.equal(loaded.rng["torch"], stored.rng["torch"])
    assert np.array_equal(loaded.rng["numpy"][1], stored.rng["numpy"][1])
    assert loaded.rng["python"] == stored.rng["python"] and loaded.source_run == "run-1"


def test_a_damaged_entry_is_removed_never_loaded(tmp_path: Path) -> None:
    cache = StageCache(tmp_path)
    cache.store("cd" * 32, _state(), {})
    state_file = cache.path("cd" * 32) / "state.safetensors"
    data = bytearray(state_file.read_bytes())
    data[-1] ^= 0xFF  # one flipped bit in the tensors
    state_file.write_bytes(bytes(data))
    assert cache.load("cd" * 32) is None and not cache.path("cd" * 32).exists()
    partial = cache.path("ef" * 32)
    partial.mkdir(parents=True)
    (partial / "state.safetensors").write_bytes(b"half")  # a writer died before meta.json
    assert cache.load("ef" * 32) is None


def test_concurrent_claims_train_a_stage_once(tmp_path: Path) -> None:
    """The first claim trains and stores; the second waits for the entry and loads it."""
    cache = StageCache(tmp_path)
    key, trained, order = "12" * 32, [], []

    def trial(name: str) -> None:
        with cache.claim(key, poll=0.05) as mine:
            order.append((name, mine))
            if mine:
                time.sleep(0.5)
                trained.append(name)
                cache.store(key, _state(), {})

    first = threading.Thread(target=trial, args=("first",))
    first.start()
    time.sleep(0.1)
    trial("second")
    first.join()
    assert trained == ["first"] and order == [("first", True), ("second", False)]
    assert not list(tmp_path.glob("*/*.lock"))


def test_a_stale_lock_is_taken_over(tmp_path: Path) -> None:
    cache = StageCache(tmp_path)
    lock = tmp_path / "34" / f"{'34' * 32}.lock"
    lock.parent.mkdir(parents=True)
    import json
    import socket

    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": 2**22 + 12345}))  # no such process
    with cache.claim("34" * 32, poll=0.05) as mine:
        assert mine


def test_size_limit_and_prune(tmp_path: Path) -> None:
    cache = StageCache(tmp_path, max_bytes=1)
    cache.store("56" * 32, _state(), {})
    cache.store("78" * 32, _state(), {})  # over the limit: the older entry goes
    assert [e["key"] for e in cache.entries()] == ["78" * 32]
    assert [e["key"] for e in StageCache(tmp_path).prune(older_than=0)] == ["78" * 32]


def _pipeline_study(tmp_path: Path, tiny_bert: Path, name: str, cache: bool, **base: object) -> str:
    config = {
        "name": name,
        "default_profile": "tiny",
        "base": {
            "method": "pipeline",
            "model": str(tiny_bert),
            "max_seq_length": 32,
            "precision": "fp32",
            "batch_size": 8,
            "eval_batch_size": 256,
            "log_every": 1,
            "stages": [
                {"contrastive": "unsup", "data": ["sst"], "max_steps": 5},
                {"finetune": "multitask", "max_steps": 3},
            ],
            "stage_cache": cache,
            "stage_cache_dir": str(tmp_path / "stage-cache"),
            **base,
        },
        "search": {"paraphrase_head": ["plain_cosine", "linear"]},
        "profiles": {"tiny": {}},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def _results(name: str) -> dict[int, dict[str, float]]:
    return {
        int(r.data.tags["trial"]): {k: v for k, v in metrics_of(r).items() if k != "train.seconds"}
        for r in child_runs(name)
    }


@pytest.mark.slow
def test_shared_pre_training_runs_once_with_identical_results(tmp_path: Path, tiny_bert: Path) -> None:
    run_study(load_study(_pipeline_study(tmp_path, tiny_bert, "uncached", False)), progress=False)
    run_study(load_study(_pipeline_study(tmp_path, tiny_bert, "cached", True)), progress=False)
    uncached, cached = _results("uncached"), _results("cached")
    assert uncached == cached and len(cached) == 2  # bit for bit, every final and copied metric
    assert all(math.isfinite(v) for v in cached[1].values())
    runs = {int(r.data.tags["trial"]): r for r in child_runs("cached")}
    assert runs[0].data.tags["stage_cache.stored"] == "contrastive: unsup"
    assert "stage_cache.reused" not in runs[0].data.tags
    assert runs[1].data.tags["stage_cache.reused"] == "1 of 2 stages (contrastive: unsup)"
    assert runs[1].data.tags["stage_cache.source_run"] == runs[0].info.run_id
    assert "stage_cache.stored" not in runs[1].data.tags
    listed = harness_here("cache", "ls", "--dir", str(tmp_path / "stage-cache"))
    assert (
        listed.returncode == 0
        and runs[0].info.run_id in listed.stdout
        and "contrastive: unsup" in listed.stdout
    )
    pruned = harness_here("cache", "prune", "--older-than", "0", "--dir", str(tmp_path / "stage-cache"))
    assert pruned.stdout.startswith("removed 1 entries")


@pytest.mark.slow
def test_machines_without_a_shared_folder_share_entries_through_mlflow(
    tmp_path: Path, tiny_bert: Path
) -> None:
    """Two 'machines' (their own cache folders) and one tracking store: the second downloads the entry."""
    for machine in ("a", "b"):
        study = _pipeline_study(tmp_path, tiny_bert, f"machine_{machine}", True, stage_cache_mlflow=True,
                                stage_cache_dir=str(tmp_path / f"cache-{machine}"))  # fmt: skip
        run_study(load_study(study), progress=False)
    first = {int(r.data.tags["trial"]): r for r in child_runs("machine_a")}
    second = {int(r.data.tags["trial"]): r for r in child_runs("machine_b")}
    assert second[0].data.tags["stage_cache.source_run"] == first[0].info.run_id
    assert _results("machine_a") == _results("machine_b")
    assert len(StageCache(tmp_path / "cache-b").entries()) == 1


@pytest.mark.slow
def test_two_worker_processes_train_a_shared_stage_once(tmp_path: Path, tiny_bert: Path) -> None:
    """`--workers 2`: both trials start together and need the same pre-training; one trains and stores
    it, the other waits for the entry and loads it."""
    study = _pipeline_study(tmp_path, tiny_bert, "together", True)
    run_study(load_study(study), workers=2, threads=1, progress=False)  # this process coordinates
    runs = child_runs("together")
    assert sorted("stage_cache.stored" in r.data.tags for r in runs) == [False, True]
    (reusing,) = [r for r in runs if "stage_cache.reused" in r.data.tags]
    (storing,) = [r for r in runs if "stage_cache.stored" in r.data.tags]
    assert reusing.data.tags["stage_cache.source_run"] == storing.info.run_id


def test_bad_duration_is_one_line() -> None:
    result = harness_here("cache", "prune", "--older-than", "soon")
    assert result.returncode == 2 and result.stderr.startswith("error: --older-than 'soon': give a number")


@pytest.mark.parametrize("field", ["stage_cache_dir", "stage_cache_max_gb"])
def test_cache_fields_do_not_change_keys(field: str) -> None:
    from harness.train.stage_keys import stage_keys

    settings = {"seed": 1, "lr": 0.1, "stage_cache_dir": "/a", "stage_cache_max_gb": 0}
    stages = [{"kind": "contrastive", "scored": False}, {"kind": "finetune", "scored": True}]
    keys = stage_keys({}, settings, {}, stages)
    assert stage_keys({}, {**settings, field: "other"}, {}, stages) == keys
    changed = stage_keys({}, {**settings, "seed": 2}, {}, stages)
    assert changed[0] != keys[0]
    later = stage_keys({}, settings, {}, [stages[0], {"kind": "finetune", "scored": True, "lr": 1}])
    assert later[0] == keys[0] and later[1] != keys[1]  # a later stage's fields leave earlier keys alone
