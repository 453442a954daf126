"""The SNLI a run names (`NLISource`: `train_data`, `snli_splits`, `train_limit`), loaded once per worker
process and cached."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.data.lineage import cached_reader
from harness.data.nli import NLIGroup, read_snli_hub, read_snli_local
from harness.errors import HarnessError


@cached_reader(maxsize=4)
def _nli(source: str, splits: tuple[str, ...], data_dir: Path) -> tuple[NLIGroup, ...]:
    if source == "snli_local":
        return tuple(read_snli_local(data_dir, splits))
    return tuple(read_snli_hub("train"))


class NLISource(BaseModel):
    """Which SNLI a run trains on, where a method or stage reads SNLI (`scl`, `sbert`, `sup_nli`
    contrastive stages): local SentEval dev/test files (`snli_local`, the `snli_splits`) or full SNLI
    train from the hub (`snli_hub`); `train_limit` keeps the first N groups. A data source like the data
    folder: any run accepts these fields, so one profile can name the SNLI for variants of several methods
    (Liao's GloVe row beside its SCL rows); they are logged beside the run fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    train_data: Literal["snli_local", "snli_hub"] = "snli_hub"
    snli_splits: list[str] = Field(default_factory=lambda: ["dev", "test"], description="for snli_local")
    train_limit: int | None = Field(None, gt=0, description="use only the first N training groups")


def load_nli(config: NLISource, data_dir: Path) -> list[NLIGroup]:
    """The SNLI groups `config` names (the files read once per process)."""
    groups = list(_nli(config.train_data, tuple(config.snli_splits), data_dir))
    if not groups:
        raise HarnessError(
            f"the training set is empty: no SNLI groups in {config.train_data} splits "
            f"{list(config.snli_splits)}; give snli_splits from dev, test"
        )
    return groups[: config.train_limit] if config.train_limit else groups
