"""Shared fixtures: the real data root, a tiny random BERT, and a private .harness home per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import tests.pauses  # noqa: F401 - installs the pause points' pauser here and in launched commands

if TYPE_CHECKING:
    from tests.services import Postgres

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault(
    "HARNESS_STRICT_METRICS", "1"
)  # a metric name in no declared family fails (metric_names)

# pytest-xdist (`make test` runs one worker per core): each worker gets its share of the cores for torch,
# in this process and in the harness processes tests start (HARNESS_THREADS), so workers never
# oversubscribe the CPU. Bit-identity tests fix their own thread count.
XDIST_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if XDIST_WORKERS > 1:
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    os.environ.setdefault("HARNESS_THREADS", str(max(1, _cores // XDIST_WORKERS)))
    for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # numpy / scikit-learn
        os.environ.setdefault(_pool, os.environ["HARNESS_THREADS"])

REPO = Path(__file__).resolve().parents[1]
DATA = (REPO.parent / "shared" / "data").resolve()
TOKENIZER = DATA / "tokenizers" / "bert-base-uncased"


def pytest_configure(config: pytest.Config) -> None:
    if XDIST_WORKERS > 1 and os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(int(os.environ["HARNESS_THREADS"]))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `slow` first, in collection order (pytest-xdist hands tests out in this order): a long
    test that starts last leaves the other cores idle while it runs alone (measured: one worker ran 24 s
    after the others had stopped)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist it is never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """`--dist load` (what `-n N` means): tests/scheduling.py's scheduler; any other `--dist`: xdist's."""
    if config.getvalue("dist") != "load":
        return None
    from tests.scheduling import SharedServersOnOneWorker

    return SharedServersOnOneWorker(config, log)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.fail(f"the test data {DATA} is missing: ../shared must sit beside the repository")
    return DATA


def _random_bert(folder: Path, layers: int) -> Path:
    """A randomly initialised BERT (hidden 32, 2 heads) of `layers` layers with the real bert-base-uncased
    tokenizer, saved to `folder`."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(TOKENIZER).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The model of the end-to-end tests (studies, trials, workers): one layer, since what they check does
    not depend on depth and a second layer doubled their evaluation time (every study's dev and final
    sentences: 0.26 -> 0.51 s per 10.8k sentences on one core)."""
    return _random_bert(tmp_path_factory.mktemp("tiny-bert"), layers=1)


@pytest.fixture(scope="session")
def two_layer_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For the tests of layer-wise code (the padding-free forward, pooling over layers): two layers, so a
    state handed from one layer to the next is checked too."""
    return _random_bert(tmp_path_factory.mktemp("two-layer-bert"), layers=2)


@pytest.fixture(autouse=True)
def harness_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own .harness (Optuna journal, MLflow sqlite store)."""
    home = tmp_path / ".harness"
    monkeypatch.setenv("HARNESS_HOME", str(home))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(DATA))
    return home


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One PostgreSQL 15 per test process, set up as docker-compose.yml's (its user, deploy/postgres's
    init.sql: the `optuna` and `mlflow` databases); skipped, saying why, where it cannot run."""
    import yaml

    from tests.services import Postgres, postgres_missing

    if postgres_missing():
        pytest.skip(postgres_missing())
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    server = Postgres(compose["services"]["postgres"]["environment"]["POSTGRES_USER"]).start()
    server.execute((REPO / "deploy/postgres/init.sql").read_text())
    yield server
    server.stop()
