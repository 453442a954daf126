"""What a study will do and cost before it runs: `run-study --dry-run` (every trial's fields and steps)
and `harness plan` (steps, evaluations and time per trial on the device at hand)."""
