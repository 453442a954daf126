"""Where a run reads GLUE from: `glue_source: local` (default) reads `<TASK>/{train,dev}.tsv` under
`glue_dir`, else under `<data dir>/glue/` (harness.data.glue); `glue_source: hub` loads the Hugging Face
`nyu-mll/glue` dataset (needs internet; the split "dev" is its `validation`, MNLI's
`validation_matched`). The hub's class labels are in the order harness.data.glue lists them."""

from __future__ import annotations

import functools
from pathlib import Path

from harness.data.glue import GlueSplit, glue_split, glue_task, read_glue
from harness.data.hub import load_hub_dataset
from harness.errors import HarnessError

HUB_DATASET = "nyu-mll/glue"


@functools.lru_cache(maxsize=4)
def read_glue_hub(name: str, split: str) -> GlueSplit:
    """One split ("train" or "dev") of a GLUE task from the hub, as `read_glue` gives it."""
    task = glue_task(name)
    config, first, second = task.hub
    hub_split = task.hub_dev if split == "dev" else split
    try:
        rows = load_hub_dataset(HUB_DATASET, config, split=hub_split)
    except Exception as exc:
        raise HarnessError(
            f"cannot load {HUB_DATASET} {config} ({hub_split}) from the hub: {type(exc).__name__}; "
            "when offline set glue_source: local with the task's files under glue_dir"
        ) from exc
    return glue_split(list(rows[first]), list(rows[second]) if second else None, list(rows["label"]), task)


def glue_split_from(source: str, data_dir: Path, glue_dir: str | None, name: str, split: str) -> GlueSplit:
    """A split of a GLUE task from `source` ("local": `<glue_dir or data_dir/glue>/<TASK>/`; "hub")."""
    if source == "hub":
        return read_glue_hub(name, split)
    return read_glue(data_dir, name, split, Path(glue_dir).expanduser() if glue_dir else None)
