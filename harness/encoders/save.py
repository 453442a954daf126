"""Save an encoder as the evaluated weights of a trial: the Hugging Face model in safetensors, its
tokenizer, `harness.json` (pooling, max length: what `harness eval` reads back) and, where the pooling
has one, the sentence-transformers layout (`modules.json`, `sentence_bert_config.json`, `1_Pooling/`,
and for BERT's pooler `2_Dense/`), so `SentenceTransformer(folder)` gives the same embeddings.

Pooling in sentence-transformers terms: `mean` is mean pooling over the attention mask;
`cls_before_pooler` is the [CLS] token; `cls` with a pooler is the [CLS] token followed by BERT's pooler,
a Dense layer with tanh (the pooler's own weights). `mean_no_cls` has no sentence-transformers module, so
only the Hugging Face files and `harness.json` are written. A normalised encoder (`pooling: model` of a
model with a Normalize module) gets a Normalize module last and `pooling: model` in `harness.json`."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

from harness.encoders.encoder import Encoder

SAVED_SETTINGS = "harness.json"
TANH = "torch.nn.modules.activation.Tanh"


def save_encoder(encoder: Encoder, folder: Path) -> bool:
    """Write the encoder into `folder`; True when the sentence-transformers layout was written too."""
    folder.mkdir(parents=True, exist_ok=True)
    encoder.model.save_pretrained(folder, safe_serialization=True)
    encoder.tokenizer.save_pretrained(folder)
    # a normalised embedding came from the model's own modules, written below: `pooling: model` reads them
    pooling_name = "model" if encoder.normalize else encoder.pooling
    _write(folder / SAVED_SETTINGS, {"pooling": pooling_name, "max_seq_length": encoder.max_length})
    pooler = getattr(encoder.model, "pooler", None)
    with_pooler = encoder.pooling == "cls" and pooler is not None
    dense = getattr(pooler, "dense", None) if with_pooler else None  # BERT's pooler: a Linear, then tanh
    mode = {"mean": "mean_tokens", "cls_before_pooler": "cls_token", "cls": "cls_token"}.get(encoder.pooling)
    if mode is None or (with_pooler and not isinstance(dense, torch.nn.Linear)):
        return False  # no sentence-transformers modules for this pooling
    hidden = encoder.hidden_size
    modules = [_module(0, "", "Transformer"), _module(1, "1_Pooling", "Pooling")]
    settings = {"max_seq_length": encoder.max_length, "do_lower_case": False}
    _write(folder / "sentence_bert_config.json", settings)
    pooling = {f"pooling_mode_{m}": m == mode for m in ("cls_token", "mean_tokens", "max_tokens")}
    _write(folder / "1_Pooling" / "config.json", {"word_embedding_dimension": hidden, **pooling})
    if dense is not None:
        layer = {"in_features": hidden, "out_features": hidden, "bias": True, "activation_function": TANH}
        _write(folder / "2_Dense" / "config.json", layer)
        state = {"linear.weight": dense.weight, "linear.bias": dense.bias}
        tensors = {name: value.detach().cpu().contiguous() for name, value in state.items()}
        save_file(tensors, str(folder / "2_Dense" / "model.safetensors"))
        modules.append(_module(2, "2_Dense", "Dense"))
    if encoder.normalize:
        modules.append(_module(len(modules), f"{len(modules)}_Normalize", "Normalize"))
    _write(folder / "modules.json", modules)
    return True


def saved_settings(model: str) -> dict[str, object]:
    """The pooling and max length a saved trial model was evaluated with (its `harness.json`); {} when
    `model` is not one."""
    path = Path(model) / SAVED_SETTINGS
    return json.loads(path.read_text()) if path.is_file() else {}


def _module(index: int, path: str, kind: str) -> dict[str, object]:
    return {"idx": index, "name": str(index), "path": path, "type": f"sentence_transformers.models.{kind}"}


def _write(path: Path, content: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=2), encoding="utf-8")
