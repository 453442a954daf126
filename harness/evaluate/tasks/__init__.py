"""Built-in evaluation task families, one file each; importing a family registers its tasks."""

from harness.evaluate.tasks import geometry, sts, transfer  # noqa: F401
