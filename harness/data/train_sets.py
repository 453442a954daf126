"""Training sets named in a run config (`train_data`), loaded once per worker process and cached."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from harness.data.nli import NLIGroup, read_snli_hub, read_snli_local
from harness.errors import HarnessError


@functools.lru_cache(maxsize=4)
def _nli(source: str, splits: tuple[str, ...], data_dir: Path) -> tuple[NLIGroup, ...]:
    if source == "snli_local":
        return tuple(read_snli_local(data_dir, splits))
    return tuple(read_snli_hub("train"))


@dataclass(frozen=True)
class NLISource:
    """Which SNLI a run trains on: local SentEval dev/test files (`snli_local`, the `snli_splits`) or full
    SNLI train from the hub (`snli_hub`); `train_limit` keeps the first N groups."""

    train_data: str = "snli_hub"
    snli_splits: tuple[str, ...] = ("dev", "test")
    train_limit: int | None = None


def load_nli(config: NLISource, data_dir: Path) -> list[NLIGroup]:
    """The SNLI groups `config` names (the files read once per process)."""
    groups = list(_nli(config.train_data, tuple(config.snli_splits), data_dir))
    if not groups:
        raise HarnessError(
            f"the training set is empty: no SNLI groups in {config.train_data} splits "
            f"{list(config.snli_splits)}; give snli_splits from dev, test"
        )
    return groups[: config.train_limit] if config.train_limit else groups
