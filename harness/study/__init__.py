"""Running a study: the Optuna study (storage, sampler, resume), the preflight checks, the coordinator and
its worker processes, one trial end to end, the stage cache's use and the study's progress bar."""
