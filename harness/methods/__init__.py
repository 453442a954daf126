"""Built-in methods. Each module registers one method with `@register_method`; import it here."""

from harness.methods import frozen, multitask, sbert, scl  # noqa: F401
