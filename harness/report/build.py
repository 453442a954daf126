"""`harness report STUDY`: read MLflow, write reports/build/<study>/ atomically (all files or none)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import pandas as pd

from harness.errors import HarnessError
from harness.report.aggregate_check import check_tables
from harness.report.baseline_row import with_baseline
from harness.report.collect import MissingColumns, NoRunMatches, varying_params
from harness.report.evidence import Evidence
from harness.report.findings import StudyFindings, log_findings
from harness.report.joined import differing, joined_frame, joined_name
from harness.report.parts.base import PartContext
from harness.report.setting import PAPER_PROFILE, paper_setting
from harness.report.settings_box import settings_box
from harness.report.spec import default_spec, load_spec
from harness.report.tables import escape_latex
from harness.resolve.derived import DERIVED_CHANGES, DERIVED_FROM
from harness.resolve.paper_plans import PAPER_PLANS_ARTIFACT, PaperPlans, paper_plans
from harness.staging import staged
from harness.stats.resample import Resampler
from harness.tracking.study_runs import unfinished_trials
from harness.tracking.tracker import Tracker, objectives_of, require_store

DOCUMENT = r"""\documentclass[10pt]{{article}}
\usepackage[margin=2cm]{{geometry}}
\usepackage{{booktabs}}
\usepackage{{graphicx}}
\usepackage{{float}}
\usepackage{{longtable}}
\usepackage{{array}}
\setlength{{\LTcapwidth}}{{\linewidth}}
\begin{{document}}
\section*{{{title}}}
{body}
\end{{document}}
"""


def write_study(
    study: str,
    tracker: Tracker,
    folder: Path,
    profile: str | None,
    prefix: str = "",
    resampler: Resampler | None = None,
    statistics: bool = True,
    data_dir: str | None = None,
    baseline: str | None = None,
    also: Sequence[str] = (),
) -> tuple[str, StudyFindings, str]:
    """Write the study's tables (.tex), figures (.png), claims (claims.tex, claims.json) and runs.csv
    into `folder`; return the LaTeX body that includes them (paths prefixed with `prefix`, the folder as
    seen from the document), what the statistics found (claims' verdicts, cells reproduced; without
    `statistics`, the numbers alone: no intervals, no claims) and the report's title (a derived study's
    names it after its origin's). Everything comes from MLflow: the study's paper profile (its setting,
    configurations, metrics and variants) from the plans its parent run logged when it started
    (harness.resolve.paper_plans), so a report of a study whose file changed since builds the same; `data_dir`
    only for parts that print examples; `baseline`: the row the runs tables compare every other row with
    (harness.report.baseline_row); `also`: more studies whose runs join this one's in one default table
    (harness.report.joined)."""
    frame, parents = joined_frame(tracker, [study, *also], profile)  # one study: its frame alone
    parent = parents[0]
    logged_study_file(tracker, parent.info.run_id, folder)  # the YAML as it ran, kept beside the report
    plans = logged_paper_plans(tracker, parent.info.run_id, folder)
    origin = parent.data.tags.get(DERIVED_FROM, study)  # a derived study is reported as its origin's
    varying = differing(varying_params(frame))
    if also:  # one table over every study's runs, labelled by what differs: no study's own spec fits all
        spec = default_spec(joined_name([study, *also]), list(frame.columns), varying)
    else:
        spec = load_spec(origin, list(frame.columns), varying, parent.data.tags.get("study.path"))
    if baseline is not None:
        spec = with_baseline(spec, baseline, frame)
    referenced = any(getattr(table, "reference", None) for table in spec.tables)
    setting = paper_setting(plans, frame) if referenced or spec.claims else None
    notes = [f"The paper profile needs: {spec.requires}"] if spec.requires else []
    for one in parents:
        tags = one.data.tags
        if DERIVED_FROM in tags:
            name = f"{tags.get('study', '?')}: a" if also else "A"
            notes.append(f"{name} study derived from {tags[DERIVED_FROM]}: {tags.get(DERIVED_CHANGES, '?')}.")
    if setting is not None and not setting.matches:
        notes.append(f"These runs are not at the paper's setting ({setting.differences}): the paper's rows "
                     "are printed for reference, without the difference harness - paper.")  # fmt: skip
    notes += [f"Not in the tables: {line}" for one in parents for line in unfinished_trials(tracker, one)]
    if "keep_best" in frame.columns and frame["keep_best"].astype(str).eq("False").any():
        notes.append("Runs with keep_best false are tested on their last step's model; their objective "
                     "is that model's dev score, not the best one seen (dev.*.best).")  # fmt: skip
    notes += [f"The paper's own numbers disagree: {m} (harness/report/aggregate_check.py)."
              for m in check_tables(spec.tables)]  # fmt: skip
    seeds = dict(zip(frame.run_id, frame["seed"], strict=True)) if "seed" in frame.columns else {}
    evidence = (
        Evidence(tracker, resampler or Resampler(), seeds, margins=spec.margins()) if statistics else None
    )
    missing = [run_id for run_id in frame.run_id if evidence and not evidence.has_items(run_id)]
    if missing:
        notes.append(f"{len(missing)} of {len(frame)} runs have no item record (items.parquet; runs from "
                     "before the harness kept them): their cells have no interval.")  # fmt: skip
    objectives = objectives_of(parent.data.tags)
    parts, context = [], PartContext(tracker, frame, folder, prefix, setting, evidence, data_dir, objectives)
    profile_run = parent.data.tags.get("profile", "?")
    unevaluated = []
    for part in [*spec.tables, *spec.figures]:
        try:
            parts.append(part.write(context))
        except MissingColumns as exc:
            if profile_run != PAPER_PROFILE and plans and set(exc.missing) <= plans.final_metrics():
                unevaluated.append(part.name)  # a smoke profile that does not evaluate what it shows
                absent = ", ".join(exc.missing)
                notes.append(f"{part.name}: profile {profile_run} does not evaluate {absent}; the paper "
                             "profile does.")  # fmt: skip
                continue
            click.echo(f"notice: {study}: {part.name} not built: {exc}", err=True)
            notes.append(f"{part.name} not built: {exc}.")
        except NoRunMatches as exc:
            if profile_run != PAPER_PROFILE and plans and _variants_elsewhere(exc.where, plans, frame):
                unevaluated.append(part.name)  # rows of variants this profile leaves out (`only`)
                notes.append(f"{part.name}: profile {profile_run} runs none of its rows ({exc.where}).")
                continue
            click.echo(f"notice: {study}: {part.name} not built: {exc}", err=True)
            notes.append(f"{part.name} not built: {exc}.")
        except HarnessError as exc:
            click.echo(f"notice: {study}: {part.name} not built: {exc}", err=True)
            notes.append(f"{part.name} not built: {exc}.")
    if unevaluated:
        click.echo(f"{study}: {', '.join(unevaluated)} left out: profile {profile_run} does not run or "
                   "evaluate what they show (--profile paper does)")  # fmt: skip
    findings = (
        StudyFindings.of(study, spec, frame, evidence, setting, plans.configurations() if plans else None)
        if evidence
        else StudyFindings(study, spec.paper)
    )
    if findings.verdicts:
        (folder / "claims.tex").write_text(findings.latex(), encoding="utf-8")
        (folder / "claims.json").write_text(findings.json(), encoding="utf-8")
        parts.append(f"\\input{{{prefix}claims.tex}}")
    intro = (
        ";\\\\\n".join(  # a line a study
            f"Study \\texttt{{{escape_latex(one.data.tags.get('study', study))}}}, profile "
            f"\\texttt{{{escape_latex(one.data.tags.get('profile', '?'))}}}, MLflow run "
            f"\\texttt{{{one.info.run_id}}}"
            for one in parents
        )
        + f"; {len(frame)} finished trials."
    )
    frame.to_csv(folder / "runs.csv", index=False)
    findings.parent_run_id = parent.info.run_id
    box = settings_box(frame, parent.data.tags.get("git_commit", "unknown"))
    body = "\n\n".join([intro, box, *([notes_box(notes)] if notes else []), *parts])  # a paragraph each
    title = escape_latex(spec.title if not also else " + ".join([study, *also]))
    shown = origin != study and not also  # a derived study's title names its origin's, then itself
    return body, findings, title + (f" (\\texttt{{{escape_latex(study)}}})" if shown else "")


def logged_paper_plans(tracker: Tracker, parent_id: str, folder: Path) -> PaperPlans | None:
    """The paper profile's plans the parent run logged when the study started (`paper_plans.json`). A
    parent from before the harness logged them: the plans of the study YAML it logged (`study.yaml`, kept
    in `folder`); None where it logged neither (a trial's run)."""
    with tempfile.TemporaryDirectory() as scratch:
        try:
            return PaperPlans.from_json(
                tracker.download(parent_id, PAPER_PLANS_ARTIFACT, Path(scratch)).read_text()
            )
        except Exception:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
            pass
    path = logged_study_file(tracker, parent_id, folder)
    if path is None:
        return None
    from harness.resolve.study_spec import load_study

    try:
        return paper_plans(load_study(str(path)))
    except HarnessError:  # a YAML an older harness accepted
        return None


def logged_study_file(tracker: Tracker, parent_id: str, folder: Path) -> Path | None:
    """The study YAML the parent run logged when the study started (`study.yaml`), downloaded into
    `folder`; None for a run that logged none."""
    try:
        return tracker.download(parent_id, "study.yaml", folder)
    except Exception:  # noqa: BLE001 - MLflow raises several kinds for a missing artifact
        return None


def _variants_elsewhere(where: dict[str, Any], plans: PaperPlans, frame: pd.DataFrame) -> bool:
    """Whether a part's `where` names only variants the study declares and these runs did not run (the
    profile's `only` left them out), so the part is empty for this profile, not wrong."""
    if set(where) != {"variant"} or "variant" not in frame.columns:
        return False
    wanted = where["variant"] if isinstance(where["variant"], list) else [where["variant"]]
    return set(wanted) <= set(plans.variants) and not set(wanted) & set(frame["variant"].astype(str))


def notes_box(notes: list[str]) -> str:
    """The report's notices (what the paper profile needs, rows left out, parts not built) in one framed
    box under the study's line, so the tables follow each other undisturbed."""
    items = "\n".join(f"\\item {escape_latex(note)}" for note in notes)
    return (
        "\\noindent\\fbox{\\parbox{\\dimexpr\\linewidth-2\\fboxsep-2\\fboxrule\\relax}{\\small\\textbf{Notes}"
        f"\\begin{{itemize}}\\setlength{{\\itemsep}}{{0pt}}\n{items}\n\\end{{itemize}}}}}}"
    )


def build_report(
    study: str,
    tracking_uri: str | None,
    out: str,
    profile: str | None,
    pdf: bool = True,
    resampler: Resampler | None = None,
    statistics: bool = True,
    data_dir: str | None = None,
    baseline: str | None = None,
    also: Sequence[str] = (),
) -> tuple[Path, StudyFindings]:
    """Write the study's tables (.tex), figures (.png), claims, runs.csv and, with pdflatex, report.pdf;
    then put the claims' verdicts on the study's parent run (artifact and metrics). With `also`, the
    studies' runs in one table, under reports/build/A+B/ (harness.report.joined)."""
    tracker = Tracker(require_store(tracking_uri))
    name = joined_name([study, *also])
    target = Path(out) / name
    with staged(target.parent, f".{name}-", "the report") as staging:
        body, findings, title = write_study(
            study, tracker, staging, profile, "", resampler, statistics, data_dir, baseline, also
        )
        (staging / "report.tex").write_text(DOCUMENT.format(title=title, body=body), encoding="utf-8")
        if pdf:
            compile_pdf(staging)
        replace_folder(staging, target)
    log_findings(tracker, findings)
    return target, findings


def compile_pdf(folder: Path, name: str = "report") -> None:
    """<name>.tex -> <name>.pdf (twice, for a table of contents); a missing or failing pdflatex is a
    notice, not a failure."""
    if shutil.which("pdflatex") is None:
        click.echo(
            "notice: pdflatex not found, so no report.pdf (install texlive-latex-recommended)", err=True
        )
        return
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"]
    for _ in range(2 if name == "book" else 1):
        result = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            break
    for suffix in (".aux", ".log", ".out", ".toc"):
        (folder / f"{name}{suffix}").unlink(missing_ok=True)
    if result.returncode != 0:
        (folder / f"{name}.pdf").unlink(missing_ok=True)
        tail = [line for line in result.stdout.splitlines() if line.startswith("!")][:1]
        click.echo(
            f"notice: pdflatex failed ({' '.join(tail) or f'see {name}.tex'}); no {name}.pdf", err=True
        )


def replace_folder(staging: Path, target: Path) -> None:
    """Swap the finished staging folder in for the old report."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
