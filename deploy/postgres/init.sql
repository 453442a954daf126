-- Run once by the postgres image on an empty volume (docker-entrypoint-initdb.d), and by
-- the tests on their own server (tests/conftest.py): the Optuna study storage, the MLflow store and the
-- MLflow server's accounts (deploy/mlflow/basic_auth.ini).
CREATE DATABASE optuna;
CREATE DATABASE mlflow;
CREATE DATABASE mlflow_auth;
