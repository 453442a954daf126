"""Built-in stage kinds, one file each; importing a kind registers it (see registry.py)."""

from harness.stages import contrastive, finetune, fusion, glue, glue_supcon, repeat  # noqa: F401
