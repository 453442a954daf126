"""The Hugging Face hub seen from the environment and the local cache folders, without importing
`datasets` or transformers (a second or more of imports): whether downloads are off, and whether a hub
dataset can be in the cache. An offline run, and every dry run, learns that a dataset is missing at once."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

TRUE = ("1", "ON", "YES", "TRUE")


class OfflineAndNotCached(Exception):
    """The hub is off (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) and the dataset is not in the local cache."""


def _set(*names: str) -> bool:
    return any(os.environ.get(name, "").upper() in TRUE for name in names)


def hub_offline() -> bool:
    """HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE set to a true value, as huggingface_hub reads them."""
    return _set("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def datasets_offline() -> bool:
    return _set("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")


def dataset_in_cache(repo_id: str) -> bool:
    """A folder for `repo_id` in the hub cache (datasets >= 3) or in the datasets cache (older layout).
    True is a maybe (the split may still be missing: `datasets` then says so); False is certain."""
    home = Path(os.environ.get("HF_HOME", "~/.cache/huggingface")).expanduser()
    hub = Path(os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or home / "hub")
    local = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    return (hub / f"datasets--{repo_id.replace('/', '--')}").exists() or (
        local / repo_id.replace("/", "___")
    ).exists()


def model_in_cache(repo_id: str) -> bool:
    """The model's config.json is in the local hub cache (huggingface_hub's lookup: no network)."""
    from huggingface_hub import try_to_load_from_cache

    try:
        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except ValueError:  # not a valid repo id: transformers says why
        return False


def load_hub_dataset(repo_id: str, *args: str, split: str) -> Any:
    """`datasets.load_dataset(repo_id, *args, split=split)`, refused at once when it cannot work offline."""
    if datasets_offline() and not dataset_in_cache(repo_id):
        raise OfflineAndNotCached(repo_id)
    import datasets

    return datasets.load_dataset(repo_id, *args, split=split)
