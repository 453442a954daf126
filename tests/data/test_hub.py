"""The hub as the environment and the cache folders show it: an offline run learns at once, without
importing `datasets`, that a dataset is not cached; a cached one goes on to `datasets.load_dataset`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.data.hub import OfflineAndNotCached, dataset_in_cache, load_hub_dataset


def test_offline_and_not_cached_is_refused_without_importing_datasets(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom harness.data.hub import OfflineAndNotCached, load_hub_dataset\n"
        "try:\n    load_hub_dataset('stanfordnlp/snli', split='train')\n"
        "except OfflineAndNotCached:\n    print('refused', 'datasets' in sys.modules)\n"
    )
    env = {"HF_HOME": str(tmp_path), "HF_DATASETS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "refused False"


def test_either_cache_layout_counts_as_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    assert not dataset_in_cache("nyu-mll/glue")
    (tmp_path / "hub" / "datasets--nyu-mll--glue").mkdir(parents=True)
    assert dataset_in_cache("nyu-mll/glue")  # datasets >= 3: the hub cache
    (tmp_path / "datasets" / "stanfordnlp___snli").mkdir(parents=True)
    assert dataset_in_cache("stanfordnlp/snli")  # the older datasets cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineAndNotCached):
        load_hub_dataset("sentence-transformers/all-nli", split="train")
