"""A sentence-transformers model folder's own embedding (`pooling: model`): its `modules.json` names the
modules `SentenceTransformer.encode` runs, Transformer -> Pooling -> (Normalize). all-MiniLM-L6-v2's are
mean pooling and a Normalize module (L2 normalisation), so its embeddings have norm 1; scores that are not
scale-free (the SentEval transfer classifiers, linear probes) change with it.

`pooling: model` reads them: the Pooling module's mode (`pooling_mode_mean_tokens` -> `mean`,
`pooling_mode_cls_token` -> the last layer's [CLS] state, `cls_before_pooler`) and whether a Normalize
module follows. A folder without `modules.json` (a plain Hugging Face model) gets `mean`, unnormalised.
Any other module (Dense, max or weighted-mean pooling, ...) is refused with the fix: give `pooling`
explicitly to embed with the harness's pooling alone (the raw pooler). A hub id's files are read from the
hub (or its local cache); where they cannot be read the model counts as one without modules."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError

# the Pooling config's mode: `pooling_mode_<mode>: true` (sentence-transformers < 6), `pooling_mode: <mode>`
ST_MODES = {
    "mean_tokens": "mean",
    "cls_token": "cls_before_pooler",
    "mean": "mean",
    "cls": "cls_before_pooler",
}
KNOWN = {"Transformer", "Pooling", "Normalize"}


@dataclass(frozen=True)
class ModelPipeline:
    """How `pooling: model` embeds: the harness pooling that equals the Pooling module, then Normalize."""

    pooling: str
    normalize: bool
    description: str


def read_model_file(where: str, filename: str) -> str | None:
    """A file of a local model folder or of a hub repository (None when it has none or is unreachable)."""
    if Path(where).is_dir():
        path = Path(where) / filename
        return path.read_text(encoding="utf-8") if path.is_file() else None
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(where, filename)).read_text(encoding="utf-8")
    except Exception:  # no such file, no network: a model without modules
        return None


def model_pipeline(where: str, name: str) -> ModelPipeline:
    """The model's own embedding from its modules.json (mean pooling where it has none); `where`: the
    resolved folder or hub id."""
    text = read_model_file(where, "modules.json")
    if text is None:
        return ModelPipeline("mean", False, "mean pooling (the model has no sentence-transformers modules)")
    modules = json.loads(text)
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    unknown = [k for k in kinds if k not in KNOWN]
    if unknown or "Pooling" not in kinds:
        what = ", ".join(unknown) if unknown else "no Pooling module"
        raise HarnessError(
            f"model {name!r}: its sentence-transformers modules ({what}) are not ones the harness runs "
            "(Transformer, Pooling, Normalize); set pooling (e.g. mean) to embed with the harness's pooling"
        )
    pooling_dir = next(m.get("path", "") for m, k in zip(modules, kinds, strict=True) if k == "Pooling")
    config = json.loads(read_model_file(where, f"{pooling_dir}/config.json") or "{}")
    modes = [key.removeprefix("pooling_mode_") for key, value in config.items()
             if key.startswith("pooling_mode_") and value is True]  # fmt: skip
    if isinstance(config.get("pooling_mode"), str):
        modes = [config["pooling_mode"]]
    if len(modes) != 1 or modes[0] not in ST_MODES:
        raise HarnessError(
            f"model {name!r}: its sentence-transformers Pooling mode ({', '.join(modes) or 'none'}) is not "
            "one the harness runs (mean_tokens, cls_token); set pooling explicitly"
        )
    pooling, normalize = ST_MODES[modes[0]], "Normalize" in kinds
    description = f"the model's sentence-transformers modules: {modes[0]}"
    return ModelPipeline(pooling, normalize, description + (", Normalize" if normalize else ""))
