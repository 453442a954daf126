"""Uncertainty: the per-item record of a final evaluation, scores recomputed from it under bootstrap
resamples (items, and seeds then items), paired differences, Holm's correction, claim verdicts and the
power of a planned number of seeds. numpy and scipy only: no MLflow, no torch; the report and the CLI
read the records from MLflow and call in here. Definitions: docs/statistics.md."""
