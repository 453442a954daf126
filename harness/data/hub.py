"""The Hugging Face hub seen from the environment and the local cache folders, without importing
`datasets` or transformers (a second or more of imports): whether downloads are off, and whether a hub
dataset can be in the cache. An offline run, and every dry run, learns that a dataset is missing at once."""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any

TRUE = ("1", "ON", "YES", "TRUE")
PROBE_SECONDS = 2.0  # how long the hub may take to answer before a model it would serve counts as unavailable


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


def hub_endpoint() -> str:
    """Where huggingface_hub downloads from (HF_ENDPOINT, as it reads it)."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def hub_unreachable() -> str | None:
    """Why the hub does not answer (`[Errno -2] Name or service not known`, `no answer in 2 s`), or None
    when it does: asked once per process and endpoint, so a model missing offline fails in a second
    instead of after huggingface_hub's retries (~26 s)."""
    return _probe(hub_endpoint())


@functools.cache
def _probe(endpoint: str) -> str | None:
    import urllib.error
    import urllib.request

    outcome: list[str | None] = []

    def ask() -> None:
        try:
            urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=PROBE_SECONDS)
            outcome.append(None)
        except urllib.error.HTTPError:  # it answered: reachable, whatever it thinks of the request
            outcome.append(None)
        except (OSError, ValueError) as exc:
            outcome.append(str(getattr(exc, "reason", exc)))

    asking = threading.Thread(target=ask, daemon=True)  # name resolution is not bounded by the timeout
    asking.start()
    asking.join(PROBE_SECONDS + 0.5)
    return outcome[0] if outcome else f"no answer in {PROBE_SECONDS:g} s"


def load_hub_dataset(repo_id: str, *args: str, split: str) -> Any:
    """`datasets.load_dataset(repo_id, *args, split=split)`, refused at once when it cannot work offline."""
    if datasets_offline() and not dataset_in_cache(repo_id):
        raise OfflineAndNotCached(repo_id)
    import datasets

    return datasets.load_dataset(repo_id, *args, split=split)
