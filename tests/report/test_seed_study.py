"""A real 3-seed study of the tiny BERT, end to end: its report's intervals cover seeds and items, and its
Claims table has a verdict for every claim."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from harness.report import spec as spec_module
from harness.report.build import build_report
from harness.resolve.study_spec import load_study
from harness.study.runner import run_study
from tests.helpers import tiny_study

SPEC = {
    "study": "seeded",
    "title": "three seeds",
    "tables": [{"name": "sts", "kind": "runs", "label": "lambda = {lambda}", "baseline": "lambda = 0.1",
                "columns": {"STS-B": "STSBenchmark.spearman"}}],
    "claims": [
        {"id": "half_beats_tenth", "source": "test", "text": "lambda 0.5 beats lambda 0.1",
         "metric": "STSBenchmark.spearman", "better": {"lambda": 0.5}, "worse": {"lambda": 0.1}},
        {"id": "half_best", "kind": "best", "source": "test", "text": "lambda 0.5 is the best",
         "metric": "STSBenchmark.spearman", "by": ["lambda"], "best": {"lambda": 0.5}},
    ],
}  # fmt: skip


@pytest.mark.slow
def test_a_three_seed_study_reports_two_level_intervals_and_a_verdict_per_claim(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(tiny_study(tmp_path, tiny_bert, {"lambda": [0.1, 0.5], "tau": [1.0]}, name="seeded"))
    config = yaml.safe_load(path.read_text())
    path.write_text(yaml.safe_dump({**config, "seeds": [1, 2, 3]}))
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "seeded.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    monkeypatch.setattr(spec_module, "REPORTS_DIR", specs)

    opt = run_study(load_study(str(path)), progress=False)
    assert sum(t.state.name == "COMPLETE" for t in opt.trials) == 6
    folder, findings = build_report("seeded", None, str(tmp_path / "out"), None, pdf=False)
    table = (folder / "sts.tex").read_text()
    assert "seeds and items (3 seeds, two levels)" in table and "items only" not in table
    assert table.count("\\quad 95\\% interval") == 2 and table.count("($n=3$)") == 2
    # the spec's baseline: the other row's paired difference from it, with the interval of that difference
    (paired,) = [line for line in table.splitlines() if "(paired)" in line]
    assert paired.startswith("\\quad $-$ $\\lambda$ = 0.1 (paired) & ")
    assert "paired on seeds and items" in table
    settings = (folder / "report.tex").read_text()  # the settings box under the title
    assert "\\textbf{Settings}" in settings and "seeds & 1, 2, 3 \\\\" in settings
    assert "precision & fp32" in settings
    verdicts = {v["id"]: v for v in json.loads((folder / "claims.json").read_text())["claims"]}
    assert set(verdicts) == {"half_beats_tenth", "half_best"}
    for verdict in verdicts.values():
        assert verdict["verdict"] in ("holds", "reversed", "inconclusive")
        assert verdict["covers"] == "seeds and items (3 seeds, few: Student's t on the seeds)"
        assert verdict["low"] < verdict["high"] and 0 <= verdict["p_holm"] <= 1
    assert "\\textbf{" in (folder / "claims.tex").read_text()
    assert len(findings.lines()) == 3  # the tally, then a line per claim
    # each trial saved its item resamples; the report read them: the same intervals as from the records
    from harness.report.evidence import Evidence
    from harness.stats.compare import interval
    from harness.tracking.study_runs import trial_frame
    from harness.tracking.tracker import Tracker

    tracker = Tracker()
    frame, _ = trial_frame(tracker, "seeded")
    first = frame.run_id.iloc[0]
    assert "resamples.npz" in {a.path for a in tracker.client.list_artifacts(first)}
    saved = Evidence(tracker).resampled([first], ["STSBenchmark.spearman"])["STSBenchmark.spearman"]
    fresh = Evidence(tracker)
    fresh._runs[first] = {}  # as if nothing were saved: recomputed from the record
    recomputed = fresh.resampled([first], ["STSBenchmark.spearman"])["STSBenchmark.spearman"]
    assert interval(saved) == pytest.approx(interval(recomputed), abs=1e-4)
