"""A model to time when its weights are not here (`harness plan`): a randomly initialised BERT of the same
config, saved once per machine in the temporary folder with the uncased WordPiece tokenizer of the data
folder (`<data>/tokenizers/bert-base-uncased`, the vocab of every uncased Google BERT). Known configs:
bert-base-uncased (that folder's config.json), google/bert_uncased_L-8_H-512_A-8 (Turc et al. 2019,
"BERT-Medium": 8 layers, hidden 512, 8 heads, intermediate 2048; its config.json on the hub) and
all-MiniLM-L6-v2 where its offline package is not installed (a GPU machine)."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from harness.encoders.location import resolve_model_name
from harness.errors import HarnessError

# all-MiniLM-L6-v2's config.json (a BERT of the uncased vocabulary; Wang et al. 2020's MiniLM, 6 layers)
MINILM = {"hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12, "intermediate_size": 1536}
KNOWN: dict[str, dict[str, int]] = {
    "bert-base-uncased": {},
    "google-bert/bert-base-uncased": {},
    "google/bert_uncased_L-8_H-512_A-8": {
        "hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8, "intermediate_size": 2048,
    },
    "all-MiniLM-L6-v2": MINILM, "sentence-transformers/all-MiniLM-L6-v2": MINILM,
}  # fmt: skip


def local_model(name: str, data_dir: Path) -> tuple[str, str | None]:
    """(a local folder to load for `name`, a note when it is a stand-in)."""
    resolved = resolve_model_name(name)
    if Path(resolved).is_dir():
        return resolved, None
    if name not in KNOWN:
        raise HarnessError(
            f"model {name!r}: its weights are not here and its config is not known to `harness plan` "
            f"(known: {', '.join(KNOWN)}); give a local model folder to time it"
        )
    return str(stand_in(name, data_dir)), f"{name}: not here; timed on a random model of its config"


def stand_in(name: str, data_dir: Path) -> Path:
    """The stand-in folder for a known config (made once; a half-made one is made again)."""
    tokenizer = data_dir / "tokenizers" / "bert-base-uncased"
    if not (tokenizer / "config.json").is_file():
        raise HarnessError(f"no tokenizer at {tokenizer}; give --data-dir with tokenizers/bert-base-uncased")
    config = {**json.loads((tokenizer / "config.json").read_text()), **KNOWN[name]}
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / f"harness-standin-{digest}"
    if (folder / "done").is_file():
        return folder
    from transformers import BertConfig, BertModel

    scratch = Path(tempfile.mkdtemp(prefix="harness-standin-"))
    for file in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        if (tokenizer / file).is_file():
            shutil.copy(tokenizer / file, scratch / file)
    BertModel(BertConfig(**config)).save_pretrained(scratch)
    (scratch / "done").write_text(name)
    shutil.rmtree(folder, ignore_errors=True)
    scratch.rename(folder)
    return folder
