"""Same seed, same config, CPU: two runs give identical metrics, and the per-item record of the final
evaluation gives them back."""

import json
from pathlib import Path

import pytest

from harness.resolve.study_spec import load_study
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, read_items
from harness.study.runner import run_study
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.helpers import child_runs, tiny_study


@pytest.mark.slow
def test_same_seed_same_metrics(tmp_path: Path, tiny_bert: Path) -> None:
    metrics = []
    for name in ("same-a", "same-b"):
        path = tiny_study(tmp_path, tiny_bert, {"seed": [7]}, name=name, method="fusion", batch_size=4,
                          max_steps=3)  # fmt: skip
        run_study(load_study(path), progress=False)
        (run,) = child_runs(name)
        metrics.append({k: v for k, v in metrics_of(run).items() if k != "train.seconds"})
    assert metrics[0] == metrics[1]
    assert "dev.overall" in metrics[0] and len(metrics[0]) > 10
    # the final dev predictions, read back from MLflow alone, give back the final scores (results.json)
    client = Tracker().client
    record = read_items(Path(client.download_artifacts(run.info.run_id, ARTIFACT, str(tmp_path))))
    results = json.loads(
        Path(client.download_artifacts(run.info.run_id, "results.json", str(tmp_path))).read_text()
    )
    assert list(record.task.unique()) == ["sst", "quora", "sts"]
    final = {f"dev.{name}": value for name, value in results["scores"].items()}
    recomputed = point_scores(record)
    assert recomputed == {name: pytest.approx(value, abs=1e-9) for name, value in final.items()}
    for accuracy in ("dev.sst.acc", "dev.quora.acc"):  # to the last bit
        assert recomputed[accuracy] == final[accuracy]


@pytest.mark.slow
def test_frozen_encoder_is_encoded_once_across_evaluations_and_trials(
    tmp_path: Path, tiny_bert: Path, harness_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.evaluate import encode as encode_module

    encoded: list[int] = []

    def counting_encode(encoder: object, sentences: list[str], *args: object) -> dict:
        encoded.append(len(sentences))
        return real_encode(encoder, sentences, *args)

    real_encode = encode_module.encode
    monkeypatch.setattr(encode_module, "encode", counting_encode)  # suite imports it at call time
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name="frozen-cache", method="frozen",
                      batch_size=4, max_steps=2, eval_every=1)  # fmt: skip
    run_study(load_study(path), progress=False)
    runs = child_runs("frozen-cache")
    assert len(runs) == 2 and all(r.data.tags["precision"] == "fp32" for r in runs)
    assert len(encoded) == 1  # trial 1's first dev evaluation; then memory, then the disk cache
    assert len(list((harness_home / "cache" / "embeddings").glob("*.npz"))) == 1

    encoded.clear()
    trained = tiny_study(tmp_path, tiny_bert, {"seed": [1]}, name="trained", method="multitask",
                         batch_size=4, max_steps=2, eval_every=1)  # fmt: skip
    run_study(load_study(trained), progress=False)
    assert len(encoded) == 2  # new weights at each evaluation; the final one repeats step 2's
    assert len(list((harness_home / "cache" / "embeddings").glob("*.npz"))) == 1  # trained: memory only


@pytest.mark.slow
@pytest.mark.parametrize("keep_best", [True, False])
def test_the_objective_is_stored_first_as_the_tested_models_dev_score(
    tmp_path: Path, tiny_bert: Path, keep_best: bool
) -> None:
    """Issue 41: a trial's first stored metric is `objective` (MLflow 3.17's compare page opens on the
    first metric the runs share), logged at each dev evaluation, its last point the Optuna value; the final
    scores are stored without a section (after the curves in the UI). Issue 58 item 4: it is the dev score
    of the model the trial tests: the best so far with keep_best, else the latest (the last step's model),
    and the run's tag `objective.of` says which."""
    name = f"objective-{keep_best}".lower()
    path = tiny_study(tmp_path, tiny_bert, {"seed": [1, 2]}, name=name, max_steps=4, eval_every=1,
                      keep_best=keep_best)  # fmt: skip
    run_study(load_study(path), progress=False)
    client = Tracker().client
    below_the_best = []  # runs whose tested model is not their best dev checkpoint
    for run in child_runs(name):
        run = client.get_run(run.info.run_id)  # the metrics in the store's order, as the UI gets them
        stored = list(run.data.metrics)
        assert stored[0] == "objective"
        (best,) = [k for k in stored if k.startswith("dev/") and k.endswith(".best")]
        dev = [p.value for p in sorted(client.get_metric_history(run.info.run_id, best.removesuffix(".best")),
                                       key=lambda p: p.step)]  # fmt: skip
        curve = sorted(
            client.get_metric_history(run.info.run_id, "objective"), key=lambda p: (p.step, p.timestamp)
        )
        tested = [max(dev[: i + 1]) for i in range(len(dev))] if keep_best else dev
        assert [p.value for p in curve][: len(dev)] == tested
        assert curve[-1].value == run.data.metrics["objective"] == tested[-1]
        assert run.data.metrics[best] == max(dev)  # the best seen, whichever model is tested
        below_the_best.append(run.data.metrics["objective"] < max(dev))
        assert run.data.tags["objective.of"].startswith("the best dev" if keep_best else "the last step's")
        finals = [k for k in stored if "/" not in k and k != "objective"]
        assert finals and all(k.startswith("STSBenchmark.") for k in finals)
        assert set(finals) <= set(metrics_of(run))
    assert any(below_the_best) == (not keep_best)  # the case the rule is about does occur here


@pytest.mark.slow
def test_mteb_results_are_logged_in_mtebs_layout(tmp_path: Path, tiny_bert: Path) -> None:
    """`mteb_results: true`: the MTEB tasks among the final tasks (here `quick`: STS-B test), on MTEB's
    text (raw for STS-B), as the artifact `mteb_results/`, which MTEB's loader reads."""
    mteb = pytest.importorskip("mteb")
    path = tiny_study(tmp_path, tiny_bert, {"seed": [3]}, name="mteb-trial", mteb_results=True, max_steps=2)
    run_study(load_study(path), progress=False)
    (run,) = child_runs("mteb-trial")
    folder = Path(Tracker().client.download_artifacts(run.info.run_id, "mteb_results", str(tmp_path)))
    cache = mteb.ResultCache(cache_path=folder)
    loaded = cache.load_results(
        models=["harness/mteb-trial-trial0"], include_remote=False, validate_and_filter=True
    )
    (result,) = loaded.model_results
    assert [task.task_name for task in result.task_results] == ["STSBenchmark"]
    main_score = result.task_results[0].scores["test"][0]["main_score"]
    assert (
        0 < abs(main_score) <= 1 and main_score != metrics_of(run)["STSBenchmark.spearman"] / 100
    )  # raw text


@pytest.mark.slow
def test_the_uis_view_groups_seeds_by_configuration_after_the_parent(tmp_path: Path, tiny_bert: Path) -> None:
    """Issue 58 item 6: every trial is tagged with its configuration (its values but the seed), the parent
    run with its own group; the saved view groups by that tag in start order, so the parent, which starts
    first, is the first row, and each configuration's seeds share one row."""
    from harness.tracking.tracker import CONFIG_TAG, PARENT_GROUP, RUNS_VIEW, VIEW_TAG

    grid = {"lambda": [0.1, 0.3], "seed": [1, 2]}
    path = tiny_study(tmp_path, tiny_bert, grid, name="grouped", max_steps=1, eval_every=1)
    run_study(load_study(path), progress=False)
    tracker = Tracker()
    experiment = tracker.client.get_experiment_by_name("grouped")
    runs = tracker.client.search_runs([experiment.experiment_id], order_by=["attributes.start_time ASC"])
    assert runs[0].data.tags["harness.role"] == "study" and runs[0].data.tags[CONFIG_TAG] == PARENT_GROUP
    groups = {r.data.tags[CONFIG_TAG]: set() for r in runs[1:]}
    for run in runs[1:]:
        groups[run.data.tags[CONFIG_TAG]].add(run.data.params["seed"])
    assert groups == {"lambda=0.1": {"1", "2"}, "lambda=0.3": {"1", "2"}}
    view = json.loads(json.loads(experiment.tags[VIEW_TAG + RUNS_VIEW])["state"])
    assert view["groupBy"]["groupByKeys"] == [{"mode": "tag", "groupByData": CONFIG_TAG}]
    assert (view["orderByKey"], view["orderByAsc"]) == ("attributes.start_time", True)
