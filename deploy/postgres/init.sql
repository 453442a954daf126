-- Run once by the postgres image on an empty volume (docker-entrypoint-initdb.d), and by
-- tests/test_scale_out.py on its own server: the Optuna study storage and the MLflow store.
CREATE DATABASE optuna;
CREATE DATABASE mlflow;
