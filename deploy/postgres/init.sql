-- Run once by the postgres image on an empty volume (docker-entrypoint-initdb.d), and by
-- the tests on their own server (tests/conftest.py): the Optuna study storage and the MLflow store.
CREATE DATABASE optuna;
CREATE DATABASE mlflow;
