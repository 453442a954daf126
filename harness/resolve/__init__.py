"""What a study or a trial is, before anything runs: the study YAML and its command-line overrides, one
trial's resolved fields (run_spec), and the derived study a changed configuration becomes. No torch, no
MLflow, no Optuna at import."""
