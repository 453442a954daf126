"""The report's statistics end to end on a real MLflow store: runs whose item records and logged scores
come from known synthetic predictions, a spec with a baseline row and claims; intervals under the rows,
daggers, the Claims table with a verdict per claim, and the verdicts on the parent run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from harness.report import spec as spec_module
from harness.report.build import build_report
from harness.stats.item_scores import point_scores
from harness.stats.items import ARTIFACT, write_items
from harness.stats.resample import Resampler
from harness.tracking.metric_names import metrics_of
from harness.tracking.tracker import Tracker
from tests.report.drawn import capture_figures
from tests.stats.records import sts_record

SUBSETS = {"STS12": [300, 200], "STS13": [250], "STS14": [300], "STS15": [250], "STS16": [200]}


def _record(noise: float, seed: int) -> pd.DataFrame:
    """STS12-16 predictions on the same items for every run, lower noise scoring higher."""
    return sts_record(SUBSETS, noise, seed)


def _store(tmp_path: Path, runs: list[tuple[dict, pd.DataFrame]], study: str = "stats_demo") -> Tracker:
    tracker = Tracker()
    experiment = tracker.experiment_id(study)
    parent = tracker.client.create_run(experiment, tags={"harness.role": "study", "profile": "smoke"})
    for number, (params, record) in enumerate(runs):
        child = tracker.start_child(experiment, parent.info.run_id, f"trial {number}", {"trial": str(number)})
        child.log_params(params)
        child.log_metrics(point_scores(record))
        child.client.log_artifact(child.run_id, str(write_items(record, tmp_path / str(number) / ARTIFACT)))
        child.finish()
    tracker.finish(parent.info.run_id, "FINISHED")
    return tracker


SPEC = {
    "study": "stats_demo",
    "title": "statistics demo",
    "tables": [
        {"name": "grid", "kind": "grid", "rows": "lambda", "columns": "tau", "metric": "STS12-16.wmean"},
        {
            "name": "rows",
            "kind": "runs",
            "label": "lambda = {lambda}",
            "baseline": "lambda = 0.1",
            "columns": {"STS12": "STS12.spearman_wmean", "Avg.": "STS12-16.wmean"},
        },
    ],  # fmt: skip
    "claims": [
        {
            "id": "low_noise_wins",
            "source": "test",
            "text": "lambda 0.5 beats lambda 0.1",
            "metric": "STS12-16.wmean",
            "better": {"lambda": 0.5},
            "worse": {"lambda": 0.1},
            "paper": [70.0, 69.0],
        },
        {
            "id": "wrong_way",
            "source": "test",
            "text": "lambda 0.1 beats lambda 0.5",
            "metric": "STS12-16.wmean",
            "better": {"lambda": 0.1},
            "worse": {"lambda": 0.5},
        },
        {
            "id": "twins",
            "source": "test",
            "text": "lambda 0.5 beats lambda 0.51",
            "metric": "STS13.spearman_wmean",
            "better": {"lambda": 0.5},
            "worse": {"lambda": 0.51},
        },
        {
            "id": "best_lambda",
            "kind": "best",
            "source": "test",
            "text": "0.5 is best",
            "metric": "STS12-16.wmean",
            "by": ["lambda"],
            "best": {"lambda": 0.5},
            "among": {"lambda": [0.1, 0.5]},
        },
        {
            "id": "best_twin",
            "kind": "best",
            "source": "test",
            "text": "0.5 is best, 0.51 its twin",
            "metric": "STS12-16.wmean",
            "by": ["lambda"],
            "best": {"lambda": 0.5},
        },
        {
            "id": "unrun",
            "source": "test",
            "text": "lambda 0.9 beats 0.1",
            "metric": "STS12-16.wmean",
            "better": {"lambda": 0.9},
            "worse": {"lambda": 0.1},
        },
    ],  # fmt: skip
}


@pytest.fixture
def reports_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "stats_demo.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    monkeypatch.setattr(spec_module, "REPORTS_DIR", folder)
    return folder


def _runs(seeds: list[int]) -> list[tuple[dict, pd.DataFrame]]:
    """lambda 0.1 noisy, 0.5 much less so; 0.51 the same predictions as 0.5 (a twin)."""
    out = []
    for seed in seeds:
        record = _record(0.6, 100 + seed)
        out += [({"lambda": 0.1, "tau": 1.0, "seed": seed}, _record(2.0, seed)),
                ({"lambda": 0.5, "tau": 1.0, "seed": seed}, record),
                ({"lambda": 0.51, "tau": 1.0, "seed": seed}, record)]  # fmt: skip
    return out


@pytest.mark.slow
def test_one_seed_report_has_intervals_daggers_and_verdicts(tmp_path: Path, reports_dir: Path) -> None:
    tracker = _store(tmp_path, _runs([1]))
    folder, findings = build_report("stats_demo", None, str(tmp_path / "out"), None, False, Resampler(1000))
    rows = (folder / "rows.tex").read_text()
    assert rows.count("\\quad 95\\% interval") == 3  # under each of the three rows
    assert "items only (1 seed" in rows and "Holm's correction over the table's 4 comparisons" in rows
    lines = [line for line in rows.splitlines() if line.startswith("$\\lambda$ = 0.5 &")]
    assert lines and lines[0].count("$^\\dagger$") == 2  # far better than the baseline on both columns
    assert "$^\\dagger$" not in next(
        line for line in rows.splitlines() if line.startswith("$\\lambda$ = 0.1 &")
    )
    grid = (folder / "grid.tex").read_text()
    assert "95\\% interval" in grid
    verdicts = {v.id: v.verdict for v in findings.verdicts}
    assert verdicts == {"low_noise_wins": "holds", "wrong_way": "reversed", "twins": "inconclusive",
                        "best_lambda": "holds", "best_twin": "inconclusive", "unrun": "not run"}  # fmt: skip
    twins = next(v for v in findings.verdicts if v.id == "twins")
    assert (twins.difference, twins.low, twins.high) == (0.0, 0.0, 0.0)
    claims = (folder / "claims.tex").read_text()
    assert "1 reversed" in claims and "best in 100\\% of resamples" in claims
    twin = next(v for v in findings.verdicts if v.id == "best_twin")  # a tie for the top: both count
    assert twin.share_best == 1.0 and twin.cells == 3
    assert "not at the paper" not in claims.lower()  # no paper profile: no setting note on each verdict
    saved = json.loads((folder / "claims.json").read_text())
    assert saved["counts"] == {"holds": 2, "holds on part of the grid": 0, "reversed": 1, "inconclusive": 2,
                              "not run": 1}  # fmt: skip
    parent = tracker.client.get_run(findings.parent_run_id)
    assert metrics_of(parent)["claims.holds"] == 2 and metrics_of(parent)["claims.reversed"] == 1
    assert "claims.json" in {a.path for a in tracker.client.list_artifacts(findings.parent_run_id)}


@pytest.mark.slow
def test_three_seeds_give_two_level_intervals(tmp_path: Path, reports_dir: Path) -> None:
    _store(tmp_path, _runs([1, 2, 3]))
    folder, findings = build_report("stats_demo", None, str(tmp_path / "out"), None, False, Resampler(1000))
    rows = (folder / "rows.tex").read_text()
    assert "seeds and items (3 seeds, two levels)" in rows and "items only" not in rows
    assert "($n=3$)" in rows
    covers = {v.covers for v in findings.verdicts if v.covers}
    assert covers == {"seeds and items (3 seeds, few: Student's t on the seeds)"}


@pytest.mark.slow
def test_intervals_are_reproducible_and_change_with_the_bootstrap_seed(
    tmp_path: Path, reports_dir: Path
) -> None:
    _store(tmp_path, _runs([1]))
    first, _ = build_report("stats_demo", None, str(tmp_path / "a"), None, False, Resampler(500, seed=1))
    again, _ = build_report("stats_demo", None, str(tmp_path / "b"), None, False, Resampler(500, seed=1))
    other, _ = build_report("stats_demo", None, str(tmp_path / "c"), None, False, Resampler(500, seed=2))
    assert (first / "rows.tex").read_text() == (again / "rows.tex").read_text()
    assert (first / "rows.tex").read_text() != (other / "rows.tex").read_text()


@pytest.mark.slow
def test_plan_seeds_sizes_each_claim_from_the_finished_seeds(tmp_path: Path, reports_dir: Path) -> None:
    from harness.report.evidence import Evidence
    from harness.report.power import power_lines
    from harness.stats.power import detectable_difference, power_at, seeds_for
    from harness.tracking.study_runs import trial_frame

    tracker = _store(tmp_path, _runs([1, 2, 3]))
    evidence = Evidence(tracker, Resampler(500))
    two, ten = (power_lines("stats_demo", None, tracker, k, evidence, "cost") for k in (2, 10))
    assert two[0].startswith("with 2 seed(s) per row: cost;") and "3 seed(s)" in two[0]
    line = next(line for line in two if line.startswith("  low_noise_wins"))
    # by hand: per-seed differences of the logged score, and one seed's paired item variance (averaged)
    frame, _ = trial_frame(tracker, "stats_demo")
    a, b = (frame[frame["lambda"] == v].sort_values("seed") for v in (0.5, 0.1))
    differences = a["STS12-16.wmean"].to_numpy() - b["STS12-16.wmean"].to_numpy()
    items = [
        np.var(
            evidence.resampled([ra], ["STS12-16.wmean"])["STS12-16.wmean"]
            - evidence.resampled([rb], ["STS12-16.wmean"])["STS12-16.wmean"],
            ddof=1,
        )
        for ra, rb in zip(a.run_id, b.run_id, strict=True)
    ]
    item_variance, seed_variance = float(np.mean(items)), float(np.var(differences, ddof=1))
    expected = detectable_difference(item_variance, seed_variance, 2)
    power, needed = (
        power_at(1.0, item_variance, seed_variance, 2),
        seeds_for(1.0, item_variance, seed_variance),
    )
    assert (
        f"(STS12-16.wmean): {expected:.2f}; at the paper's difference +1.00: power {100 * power:.0f}%" in line
    )
    assert ("no number of seeds reaches 80%" in line) == (needed is None)
    assert float(line.split(": ")[1].split(";")[0]) > float(
        next(line for line in ten if line.startswith("  low_noise_wins")).split(": ")[1].split(";")[0]
    )
    assert any("unrun: not estimated" in line for line in two)


def test_plan_seeds_with_one_seed_gives_the_items_floor(tmp_path: Path, reports_dir: Path) -> None:
    from harness.report.evidence import Evidence
    from harness.report.power import power_lines

    tracker = _store(tmp_path, _runs([1]))
    lines = power_lines("stats_demo", None, tracker, 3, Evidence(tracker, Resampler(300)), "cost")
    assert any(line.startswith("  low_noise_wins") and ">=" in line and "seed noise unknown" in line
               for line in lines)  # fmt: skip


@pytest.mark.slow
def test_line_points_carry_their_intervals(
    tmp_path: Path, reports_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lambda's point carries the 95% interval over both seeds' items; the line is drawn through the
    seeds' mean at each lambda, each error bar spans exactly that point's interval (low below, high
    above), and the title says the bars are intervals."""
    from harness.report.evidence import Evidence
    from harness.report.figures import curve
    from harness.report.parts.line import Line, line_frame
    from harness.stats.compare import interval
    from harness.tracking.study_runs import trial_frame

    tracker = _store(tmp_path, _runs([1, 2]))
    frame, _ = trial_frame(tracker, "stats_demo")
    evidence = Evidence(tracker, Resampler(300))
    spec = Line(name="line", kind="line", x="lambda", metric="STS12-16.wmean")
    points = line_frame(frame, spec, evidence)
    half = points[points.x == 0.5]
    runs = list(frame[frame["lambda"] == 0.5].sort_values("seed").run_id)
    expected = interval(evidence.resampled(runs, ["STS12-16.wmean"])["STS12-16.wmean"])
    assert (half.low.iloc[0], half.high.iloc[0]) == expected and len(half) == 2  # both seeds, one interval
    drawn = capture_figures(monkeypatch)
    curve(points, spec, tmp_path / "line.png")
    assert (tmp_path / "line.png").stat().st_size > 1000
    ax = drawn["line.png"].axes[0]
    means = frame.groupby("lambda")["STS12-16.wmean"].mean()
    (container,) = ax.containers
    caps = set(container.lines[1])
    (line,) = [drawn_line for drawn_line in ax.get_lines() if drawn_line not in caps]
    assert list(line.get_xdata()) == [0.1, 0.5, 0.51]
    np.testing.assert_allclose(line.get_ydata(), means.to_numpy(), rtol=1e-12)
    ends = points.groupby("x")[["low", "high"]].first()
    assert ((ends.low <= means.to_numpy()) & (means.to_numpy() <= ends.high)).all()  # so no bar is clipped
    (bars,) = container.lines[2]
    drawn_ends = [(segment[0, 0], segment[0, 1], segment[1, 1]) for segment in bars.get_segments()]
    np.testing.assert_allclose(drawn_ends, [(x, row.low, row.high) for x, row in ends.iterrows()], rtol=1e-12)
    assert ax.get_xlabel() == "λ" and ax.get_title().endswith("(bars: 95% intervals)")


def test_a_bad_claim_or_a_missing_baseline_degrades_to_a_note(tmp_path: Path, reports_dir: Path) -> None:
    spec = {
        "study": "stats_demo",
        "title": "t",
        "tables": [{"name": "rows", "kind": "runs", "label": "lambda = {lambda}", "baseline": "lambda = 0.9",
                    "columns": {"Avg.": "STS12-16.wmean"}}],
        "claims": [{"id": "vague", "source": "test", "text": "t", "metric": "STS12-16.wmean",
                    "better": {"tau": 1.0}, "worse": {"lambda": 0.1}}],
    }  # fmt: skip
    (reports_dir / "stats_demo.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    _store(tmp_path, _runs([1]))
    folder, findings = build_report("stats_demo", None, str(tmp_path / "out"), None, False, Resampler(300))
    rows = (folder / "rows.tex").read_text()
    assert "No dagger: these runs have no row $\\lambda$ = 0.9" in rows and "\\quad 95\\% interval" in rows
    (vague,) = findings.verdicts
    assert vague.verdict == "not run" and vague.note.startswith(
        "not judged: claim vague: {'tau': 1.0} matches"
    )


def test_paper_values_are_marked_inside_above_or_below_the_interval(
    tmp_path: Path, reports_dir: Path
) -> None:
    tracker = _store(tmp_path, _runs([1]))
    from harness.tracking.study_runs import trial_frame

    frame, _ = trial_frame(tracker, "stats_demo")
    ours = float(frame[frame["lambda"] == 0.5]["STS12-16.wmean"].iloc[0])
    spec = {"study": "stats_demo", "title": "t", "tables": [
        {"name": "rows", "kind": "runs", "label": "lambda = {lambda}", "columns": {"Avg.": "STS12-16.wmean"},
         "reference": {"lambda = 0.5": {"Avg.": round(ours, 2)}, "lambda = 0.1": {"Avg.": 99.0},
                       "lambda = 0.51": {"Avg.": 1.0}}}]}  # fmt: skip
    (reports_dir / "stats_demo.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    folder, findings = build_report("stats_demo", None, str(tmp_path / "out"), None, False, Resampler(500))
    assert dict(findings.reproduced) == {"inside": 1, "above": 1, "below": 1, "equivalent": 1}
    rows = (folder / "rows.tex").read_text()
    assert "99.00$^\\uparrow$" in rows and "1.00$^\\downarrow$" in rows
    assert "1 of 3 inside the harness's interval" in rows
    assert f"{round(ours, 2):.2f}$^\\equiv$" in rows  # its own value: reproduced within +-2 (TOST)
    # lambda 0.5 and its twin 0.51 tie for the best: marked "=", not bold
    assert f"{ours:.2f}$^{{=}}$" in rows and "\\textbf" not in rows and "(a tie)" in rows
    assert (
        "within $\\pm$2 points ($\\pm$0.02 on the CS224N fractions) (two one-sided tests at 0.05), 1 of 3"
        in rows
    )


@pytest.mark.slow
def test_a_claim_names_a_row_of_another_study_of_the_store(tmp_path: Path, reports_dir: Path) -> None:
    """stats_demo's lambda 0.5 against the row `baseline` of a second study scored on the same items: the
    claim is judged across the two studies, paired by item (a twin in the other study gives exactly 0)."""
    _store(tmp_path, _runs([1]))
    other = [
        ({"variant": "baseline", "seed": 1}, _record(2.0, 1)),
        ({"variant": "twin", "seed": 1}, _record(0.6, 101)),
    ]
    _store(tmp_path / "other", other, study="other_demo")

    def against(name: str, variant: str, study: str) -> dict:
        return {"id": name, "source": "test", "text": "t", "metric": "STS12-16.wmean",
                "better": {"lambda": 0.5}, "worse": {"variant": variant}, "worse_study": study}  # fmt: skip

    claims = [
        against("beats_other", "baseline", "other_demo"),
        against("twin_elsewhere", "twin", "other_demo"),
        against("nowhere", "x", "absent_study"),
    ]
    spec = {**SPEC, "claims": claims}
    (reports_dir / "stats_demo.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    _, findings = build_report("stats_demo", None, str(tmp_path / "out"), None, False, Resampler(500))
    verdicts = {v.id: v for v in findings.verdicts}
    assert verdicts["beats_other"].verdict == "holds" and verdicts["beats_other"].difference > 20
    twin = verdicts["twin_elsewhere"]
    assert (twin.difference, twin.low, twin.high) == (0.0, 0.0, 0.0)  # the same items, the same predictions
    assert verdicts["nowhere"].verdict == "not run" and "absent_study" in verdicts["nowhere"].note
