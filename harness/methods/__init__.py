"""Built-in methods. Each module registers one method with `@register_method`; import it here."""

from harness.methods import (  # noqa: F401
    contrastive_first,
    ensemble,
    frozen,
    fusion,
    glove,
    multitask,
    pipeline,
    sbert,
    scl,
    sup_simcse,
    supcl_seq,
    supervised_first,
    unsup_simcse,
)
