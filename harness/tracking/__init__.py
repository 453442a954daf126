"""MLflow: the runs of a study and of each trial (tracker), the names metrics are stored under, the local
store (its template and a sqlite index read without MLflow) and a study's runs read back as frames.
Below the methods (an ensemble reads another study's runs) and above evaluation and statistics (a run
logs their records). Importing this package imports no MLflow; its modules do."""
