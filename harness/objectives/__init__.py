"""Built-in objectives, one file each; importing one registers it (see registry.py)."""

from harness.objectives import ensemble, glue, multitask, sts  # noqa: F401
