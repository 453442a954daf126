"""Keeping many processes on one study correct: signals and pause points, the fork server, GPU placement,
the coordinator's lease, lost workers' trials, storages that ride out database outages and interrupted
journal writes, and the few reaches past Optuna's public API. No study logic: the study package uses
these."""
