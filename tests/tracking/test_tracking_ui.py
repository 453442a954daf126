"""Issue 41 item 4: what the harness gives the MLflow 3.17 UI. Every link opens the model-training view;
the link `run-study` prints opens the experiment's saved view (the searched params and the objective as
columns, the best first); a trial's first stored metric is the objective (the compare page's default).

The last tests read the installed UI's JavaScript for the keys these rely on, so that an MLflow upgrade
that drops one fails here rather than in a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import mlflow
import pytest

from harness.tracking.metric_names import OBJECTIVE
from harness.tracking.tracker import (
    RUNS_VIEW,
    TRAINING_VIEW,
    VIEW_TAG,
    Tracker,
    experiment_url,
    runs_view,
    saved_view,
)

ROOT = Path(__file__).resolve().parents[2]
# the experiment page's search facets (MLflow 3.17): with any of them in the URL, a saved view is not applied
FACETS = ["searchFilter", "orderByKey", "orderByAsc", "startTime", "lifecycleFilter", "modelVersionFilter",
          "datasetsFilter"]  # fmt: skip


def query(url: str) -> dict[str, list[str]]:
    """The query of a hash-routed UI link (`http://host/#/route?query`)."""
    return parse_qs(urlsplit(urlsplit(url).fragment).query)


@pytest.mark.parametrize("uri", ["sqlite:///x/mlflow.db", "http://mlflow.lab:8080/", "postgresql://h/db"])
def test_the_printed_link_opens_the_training_view_through_the_saved_view(uri: str) -> None:
    url = experiment_url(uri, "7")
    assert urlsplit(url).fragment.startswith("/experiments/7/runs?")
    assert query(url) == {"workflowType": ["machine_learning"], "viewStateShareKey": [RUNS_VIEW]}
    assert not set(FACETS) & set(query(url))  # any of them and the UI ignores the view
    assert url.startswith(
        "http://mlflow.lab:8080/#/" if uri.startswith("http") else "http://127.0.0.1:5000/#/"
    )


def test_every_ui_link_in_the_code_and_docs_opens_the_training_view() -> None:
    """Each line that writes a link to a page of the UI (`/#/...`) carries `workflowType=machine_learning`
    (or TRAINING_VIEW): without it MLflow 3.17 opens the GenAI view."""
    files = [
        *sorted((ROOT / "harness").rglob("*.py")),
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
    ]
    links = [
        (path.relative_to(ROOT), line)
        for path in files
        for line in path.read_text().splitlines()
        if "/#/" in line
    ]
    assert links, "no UI link found: the scan looks in the wrong place"
    bare = [
        (str(path), line) for path, line in links if TRAINING_VIEW not in line and "TRAINING_VIEW" not in line
    ]
    assert not bare


def test_readme_and_docs_name_no_bare_ui_address() -> None:
    """The UI's address alone opens its home page in the GenAI view: the docs give the link with the view."""
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in path.read_text().splitlines():
            for address in re.findall(r"http://127\.0\.0\.1:5000\S*", line):
                assert TRAINING_VIEW in address, f"{path.name}: {line}"


def test_an_experiment_gets_the_saved_view_of_its_searched_params_and_objective() -> None:
    tracker = Tracker()
    experiment = tracker.experiment_id("viewed", "d", searched=["lambda", "temperature"])
    tags = tracker.client.get_experiment(experiment).tags
    envelope = json.loads(tags[VIEW_TAG + RUNS_VIEW])  # the UI's saved-view envelope (at most 20,000 chars)
    assert set(envelope) == {"name", "createdAt", "updatedAt", "state"}
    assert isinstance(envelope["state"], str) and isinstance(envelope["createdAt"], int)
    state = json.loads(envelope["state"])
    assert state == {  # the parent first (it starts first), then a group per configuration (issue 58 item 6)
        "orderByKey": "attributes.start_time",
        "orderByAsc": True,
        "selectedColumns": ["params.`lambda`", "params.`temperature`", f"metrics.`{OBJECTIVE}`"],
        "groupBy": {"groupByKeys": [{"mode": "tag", "groupByData": "harness.config"}],
                    "aggregateFunction": "average"},
    }  # fmt: skip
    assert saved_view(tags) == (state, envelope["createdAt"])
    # a later caller that does not know the search (a worker, `harness eval`) keeps the columns
    assert tracker.experiment_id("viewed") == experiment
    assert tracker.client.get_experiment(experiment).tags[VIEW_TAG + RUNS_VIEW] == tags[VIEW_TAG + RUNS_VIEW]
    # a changed search updates the view, which keeps its creation time
    tracker.experiment_id("viewed", "d", searched=["seed"])
    again = json.loads(tracker.client.get_experiment(experiment).tags[VIEW_TAG + RUNS_VIEW])
    assert json.loads(again["state"])["selectedColumns"] == ["params.`seed`", "metrics.`objective`"]
    assert again["createdAt"] == envelope["createdAt"] <= again["updatedAt"]
    # the final score a study is read by, after the objective (issue 58 item 6)
    tracker.experiment_id("viewed", "d", searched=["seed"], finals=["STS12-16.wmean"])
    read_by = json.loads(tracker.client.get_experiment(experiment).tags[VIEW_TAG + RUNS_VIEW])
    assert json.loads(read_by["state"])["selectedColumns"] == [
        "params.`seed`",
        "metrics.`objective`",
        "metrics.`STS12-16.wmean`",
    ]


def test_every_experiment_the_harness_opens_has_the_view_its_link_names() -> None:
    """The printed link names the view: an experiment without it would open on an error, then the GenAI
    view. A new experiment, and one made elsewhere, get one (the objective alone until a study names its
    searched params)."""
    tracker = Tracker()
    new = tracker.experiment_id("fresh")
    old = tracker.client.create_experiment("made-elsewhere")
    assert tracker.experiment_id("made-elsewhere") == old
    for experiment in (new, old):
        state, _ = saved_view(tracker.client.get_experiment(experiment).tags)
        assert state == runs_view() and state["selectedColumns"] == ["metrics.`objective`"]


def test_the_objective_is_a_runs_first_stored_metric() -> None:
    """The compare page's parallel coordinates open on the first metric the runs share, in the order the
    store returns them (first logged first): buffered training metrics do not go before the objective."""
    tracker = Tracker()
    experiment = tracker.experiment_id("ordered")
    run = tracker.start_run(experiment, "r", {})
    run.log_metrics({"train.loss": 1.0, "train.lr": 1e-5}, step=1, flush=False)
    run.log_metrics({"dev.STSBenchmark.spearman": 80.0, OBJECTIVE: 80.0}, step=1)
    run.log_metrics({"STSBenchmark.spearman": 75.0, OBJECTIVE: 80.0}, step=2)
    run.finish()
    stored = list(tracker.client.get_run(run.run_id).data.metrics)
    assert stored[0] == OBJECTIVE
    assert set(stored) == {
        "objective",
        "train/loss",
        "train/lr",
        "dev/STSBenchmark.spearman",
        "STSBenchmark.spearman",
    }
    (searched,) = tracker.client.search_runs([experiment])  # what the runs page reads
    assert next(iter(searched.data.metrics)) == OBJECTIVE


# --- the installed UI reads what the harness writes ----------------------------------------------------


@pytest.fixture(scope="module")
def bundle() -> str:
    """The MLflow UI's JavaScript, as installed."""
    folder = Path(mlflow.__file__).parent / "server" / "js" / "build" / "static" / "js"
    files = sorted(folder.glob("*.js"))
    if not files:
        pytest.skip(f"no MLflow UI build under {folder}")
    return "\n".join(path.read_text(errors="replace") for path in files)


def test_the_ui_takes_its_view_from_the_url_not_the_experiment_kind_tag(bundle: str) -> None:
    assert re.search(r'\.get\("workflowType"\)', bundle)
    assert re.search(r'MACHINE_LEARNING="machine_learning"', bundle)
    assert re.search(r'key:"mlflow\.workflowType",version:1,initialValue:\w+', bundle)


@pytest.mark.slow
def test_the_ui_opens_saved_views_as_the_harness_writes_them(bundle: str) -> None:
    assert '"viewStateShareKey"' in bundle and '"mlflow.sharedViewState."' in bundle
    facets = ",".join(f'"{facet}"' for facet in FACETS)
    assert f"[{facets}]" in bundle  # the URL keys that, present, make the page skip the view
    assert re.search(r"JSON\.stringify\(\{name:\w+,createdAt:\w+,updatedAt:\w+,state:\w+\}\)", bundle)
    assert '"selectedColumns"' in bundle  # one of the table state's keys a view sets
    assert re.search(r'\w+=\(\w+,\w+\)=>\w+\+"\.`"\+\w+\+"`"', bundle)  # column keys: params.`name`
    # grouping (issue 58 item 6): a tag's values, their average; a shared view drops pins, so the parent
    # is first by the start-time sort, which leaves groups in the order their first run came
    assert 'e.Tag="tag"' in bundle and 'e.Average="average"' in bundle and "groupByKeys" in bundle
    assert '["runsExpanded","runsPinned","runsHidden","runsVisibilityMap","autoRefreshEnabled"]' in bundle
    assert re.search(r'switch\(\w+\)\{case"metrics":.{0,400}case"params":.{0,400}default:return 0\}', bundle)


def test_the_compare_page_opens_on_the_first_shared_metric(bundle: str) -> None:
    assert "selectedMetricKeys:this.props.sharedMetricKeys.slice(0,1)" in bundle
    assert re.search(
        r"intersection\)\(\.\.\.\w+\.map\(\w+=>Object\.keys\(\w+\.entities\.latestMetricsByRunUuid", bundle
    )


def test_the_run_page_sections_charts_by_the_part_before_the_last_slash(bundle: str) -> None:
    assert re.search(r"extractChartSectionName=.{0,120}\.split\(\w+\)\.slice\(0,-1\)\.join\(\w+\)", bundle)
    assert 'q="Model metrics"' in bundle or '"Model metrics"' in bundle
