"""The hub as the environment and the cache folders show it: an offline run learns at once, without
importing `datasets`, that a dataset is not cached; a cached one goes on to `datasets.load_dataset`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.data.hub import OfflineAndNotCached, dataset_in_cache, load_hub_dataset


def test_offline_and_not_cached_is_refused_without_importing_datasets(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom harness.data.hub import OfflineAndNotCached, load_hub_dataset\n"
        "try:\n    load_hub_dataset('stanfordnlp/snli', split='train')\n"
        "except OfflineAndNotCached:\n    print('refused', 'datasets' in sys.modules)\n"
    )
    env = {"HF_HOME": str(tmp_path), "HF_DATASETS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "refused False"


def test_either_cache_layout_counts_as_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_DATASETS_CACHE"):
        monkeypatch.delenv(name, raising=False)
    assert not dataset_in_cache("nyu-mll/glue")
    (tmp_path / "hub" / "datasets--nyu-mll--glue").mkdir(parents=True)
    assert dataset_in_cache("nyu-mll/glue")  # datasets >= 3: the hub cache
    (tmp_path / "datasets" / "stanfordnlp___snli").mkdir(parents=True)
    assert dataset_in_cache("stanfordnlp/snli")  # the older datasets cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(OfflineAndNotCached):
        load_hub_dataset("sentence-transformers/all-nli", split="train")


@pytest.fixture
def hub_at(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """Point the hub at `endpoint`, downloads on (the suite runs with HF_HUB_OFFLINE=1)."""

    def point(endpoint: str) -> None:
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)

    return point


def test_a_model_the_hub_cannot_serve_now_fails_at_once(hub_at, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 41 item 3: one probe of the hub (no answer: one line in a second), not ~26 s of retries."""
    import time

    from harness.encoders.location import check_available
    from harness.errors import HarnessError
    from tests.services import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"
    hub_at(endpoint)
    started = time.monotonic()
    with pytest.raises(HarnessError) as error:
        check_available("sentence-transformers/foo-bar")
    assert time.monotonic() - started < 3
    assert str(error.value) == (
        f"cannot load model 'sentence-transformers/foo-bar': not in the local hub cache and the hub "
        f"({endpoint}) is not reachable ([Errno 111] Connection refused); use a local directory or "
        "all-MiniLM-L6-v2 offline, or set HF_HUB_OFFLINE=1"
    )
    check_available("all-MiniLM-L6-v2")  # the offline package: no hub needed
    check_available(str(tmp_path))  # a local folder: its files are checked elsewhere


def test_a_hub_that_answers_leaves_the_model_to_transformers(hub_at) -> None:  # noqa: ANN001
    """Users with internet keep the real loading path: any answer (even an error status) is reachable."""
    import http.server
    import threading

    from harness.data.hub import hub_unreachable
    from harness.encoders.location import check_available

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hub_at(f"http://127.0.0.1:{server.server_port}")
        assert hub_unreachable() is None
        check_available("sentence-transformers/foo-bar")  # no error here: transformers downloads or says why
    finally:
        server.shutdown()
