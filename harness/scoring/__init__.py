"""Built-in scorers, one file each; importing one registers it (see registry.py)."""

from harness.scoring import ensemble, glue, multitask, sts  # noqa: F401
