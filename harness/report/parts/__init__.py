"""Built-in report parts (tables and figures of `reports/<study>.yaml`). Each module registers one kind
with `@register_part`; import it here."""

from harness.report.parts import (  # noqa: F401
    bar,
    curve,
    errors_table,
    grid_table,
    heatmap,
    line,
    pareto,
    projection,
    runs_table,
)
