"""The MLflow client with each call tried again while the tracking server's own database is busy.

An MLflow server whose database connections are all taken (its SQLAlchemy pool, MLFLOW_SQLALCHEMYSTORE_
POOL_SIZE + MAX_OVERFLOW per server process) answers a request it could not start with 400 BAD_REQUEST,
"QueuePool limit of size 2 overflow 8 reached, connection timed out" (MLflow 3.17 answers its store's
SQLAlchemy errors so), which MLflow's client does not retry (it retries 429 and 5xx answers), and the
harness took for the trial's own error: in bench/chaos.py's 64-worker soak, 16 trials failed so during
database restarts and their points were lost. Such an answer means the server did nothing, so the call is
made again after 0.5, 1, 2, 4, 8, 15, 15, ... s (harness.backoff), until `HARNESS_TRACKING_RETRY_SECONDS`
(default 60 s) have passed since it first failed (one warning line when it starts); then the error goes
on, and harness.errors.tracking_unreachable takes it for the outage it is (the trial goes back to the
queue).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

from harness.backoff import retried_for
from harness.errors import tracking_server_busy
from harness.notices import notice

T = TypeVar("T")
RETRY_SECONDS = 60.0


class SteadyClient:
    """An MlflowClient whose methods retry `tracking_server_busy` answers (see the module's docstring)."""

    def __init__(self, client: Any, seconds: float | None = None) -> None:
        self._client = client
        self._seconds = seconds

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.retried(lambda: attr(*args, **kwargs))

        return call

    def retried(self, call: Callable[[], T]) -> T:
        window = self._seconds
        if window is None:
            window = float(os.environ.get("HARNESS_TRACKING_RETRY_SECONDS") or RETRY_SECONDS)

        def warn_once(exc: Exception, elapsed: float) -> None:
            if elapsed == 0.0:
                first_line = str(exc).splitlines()[0][:160]
                notice(f"warning: the MLflow server's database is busy ({first_line}); retrying for up "
                       f"to {window:.0f} s")  # fmt: skip

        return retried_for(call, window, tracking_server_busy, warn_once)
