"""The stage cache's keys: a hash of everything that determines the training state after a stage.

Key of stage i = SHA-256 of
- the common part: the method's name, the model's identity (a local folder's config and weight files by
  content, else the hub id), the data root, the seed, the device type and autocast dtype (and on CPU the
  thread count: reductions split by thread), the torch and transformers versions, and every run setting
  that acts on training (not the output-only ones: logging, evaluation batch size, saving; not the
  schedule fields, which each stage resolves below);
- stage by stage up to i, the method's description of the stage (harness.methods.pipeline: its fields,
  resolved schedule, first epoch, whether it is dev-scored, and the parameter groups of the modules it
  trains);
- once a stage is dev-scored, the evaluation settings too (every run setting and method field), since the
  best checkpoint kept so far depends on them.

A method that describes no stages (None) is not cached. Training is re-seeded before the first stage and
the pipeline's modules are initialised from their own seeds, so a stage's state does not depend on
modules built for later stages (a different fine-tuning head leaves the pre-training key unchanged).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch
import transformers

from harness.data.lineage import fingerprint

VERSION = 1
# run settings that do not act on training: output, logging, evaluation (scored stages add them back)
NOT_TRAINING = {
    "eval_every", "keep_best", "objective_metric", "eval_suite", "final_tasks", "transfer_classifier",
    "transfer_preset", "save_embeddings", "train_eval_size", "save_model", "mteb_results", "log_every",
    "eval_batch_size", "text_variant", "device", "precision", "stage_cache", "stage_cache_dir",
    "stage_cache_max_gb", "stage_cache_mlflow",
}  # fmt: skip
SCHEDULE = {"epochs", "lr", "batch_size", "max_steps"}  # resolved per stage
CACHE_FIELDS = {"stage_cache", "stage_cache_dir", "stage_cache_max_gb", "stage_cache_mlflow"}
MODEL_FILES = ("config.json", "*.safetensors", "*.bin", "*.index.json")  # sharded weights too


def model_identity(resolved: str) -> str:
    """A local model folder by the content of its config and weights, a hub id by its name."""
    folder = Path(resolved)
    if not folder.is_dir():
        return f"hub:{resolved}"
    paths = sorted({p for pattern in MODEL_FILES for p in folder.glob(pattern) if p.is_file()})
    parts = []
    for path in paths:  # sha256, hashed again only when a file's size or mtime changes (harness.data.lineage)
        parts.append(f"{path.name}:{fingerprint(path)['sha256']}")
    return "dir:" + ",".join(parts)


def stage_keys(
    common: dict[str, Any], settings: dict[str, Any], params: dict[str, Any], stages: list[dict[str, Any]]
) -> list[str]:
    """One key per stage (see the module docstring); `settings` are the run's, `params` the method's."""
    training = {k: v for k, v in settings.items() if k not in NOT_TRAINING | SCHEDULE}
    evaluation = {k: v for k, v in settings.items() if k not in CACHE_FIELDS}
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}
    threads = {"threads": torch.get_num_threads()} if common.get("device") == "cpu" else {}
    base = {"version": VERSION, **versions, **threads, **common, "settings": training}
    keys, chain = [], []
    for stage in stages:
        chain.append(stage)
        payload = {**base, "stages": chain}
        if any(s.get("scored") for s in chain):
            payload |= {"evaluation": evaluation, "params": params}
        text = json.dumps(payload, sort_keys=True, default=str)
        keys.append(hashlib.sha256(text.encode()).hexdigest())
    return keys
