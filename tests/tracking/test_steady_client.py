"""harness.tracking.steady_client: a tracking server whose database is busy answers 400 "QueuePool limit
... reached" (bench/chaos.py's 64-worker soak: 16 trials failed on it and their points were lost). A real
MLflow server behind a loopback proxy that gives the first answers of a kind that busy server's answer:
the harness's write is made again and lands once; past the retry window it is an outage, not an error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mlflow.entities import Metric

from harness.tracking.tracker import Tracker, tracking_outage
from tests.busy_mlflow import busy_proxy, mlflow_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as uri:
        yield uri


def test_a_write_answered_busy_is_made_again_and_lands_once(server: str) -> None:
    with busy_proxy(server, busy=2) as proxy:
        tracker = Tracker(proxy.uri)
        run_id = tracker.client.create_run(tracker.experiment_id("busy")).info.run_id
        tracker.client.log_batch(run_id, metrics=[Metric("dev_score", 0.5, 0, 0)])
    assert proxy.calls == 3  # two busy answers, then the write
    history = Tracker(server).client.get_metric_history(run_id, "dev_score")
    assert [(m.value, m.step) for m in history] == [(0.5, 0)]


def test_a_database_busy_past_the_window_is_an_outage_not_an_error(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_TRACKING_RETRY_SECONDS", "1")
    with busy_proxy(server, busy=100) as proxy:
        tracker = Tracker(proxy.uri)
        run_id = tracker.client.create_run(tracker.experiment_id("busier")).info.run_id
        with pytest.raises(Exception) as raised:
            tracker.client.log_batch(run_id, metrics=[Metric("dev_score", 0.5, 0, 0)])
    assert 1 < proxy.calls < 5  # made again within the window, then given up
    outage = tracking_outage(raised.value)
    assert outage is not None and "QueuePool limit" in str(outage)


def test_other_errors_are_not_made_again(server: str) -> None:
    tracker = Tracker(server)
    with pytest.raises(Exception, match="RESOURCE_DOES_NOT_EXIST|not found"):
        tracker.client.get_run("0" * 32)
