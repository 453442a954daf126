"""Keeping many processes on one study correct: signals and pause points, how a trial ends whatever ends
it (the fault layer around a trial), the fork server, GPU placement, the coordinator's lease, lost
workers' trials, storages that ride out database outages and interrupted journal writes, and the few
reaches past Optuna's public API. No study logic: the study package uses these."""
