"""`harness report STUDY`: read MLflow, write reports/build/<study>/ atomically (all files or none)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import click

from harness.report.collect import histories, trial_frame
from harness.report.figures import curve, curve_frame, heatmap
from harness.report.spec import Curve, GridTable, load_spec
from harness.report.tables import escape_latex, grid_latex, runs_latex
from harness.tracking import Tracker

DOCUMENT = r"""\documentclass[10pt]{{article}}
\usepackage[margin=2cm]{{geometry}}
\usepackage{{booktabs}}
\usepackage{{graphicx}}
\usepackage{{float}}
\begin{{document}}
\section*{{{title}}}
Study \texttt{{{study}}}, profile \texttt{{{profile}}}, MLflow run \texttt{{{run_id}}}; {n} finished trials.
{body}
\end{{document}}
"""


def build_report(
    study: str, tracking_uri: str | None, out: str, profile: str | None, pdf: bool = True
) -> Path:
    """Write the study's tables (.tex), figures (.png), runs.csv and, with pdflatex, report.pdf."""
    frame, parent = trial_frame(Tracker(tracking_uri), study, profile)
    spec = load_spec(study, list(frame.columns))
    target = Path(out) / study
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{study}-", dir=target.parent))
    try:
        body = []
        for table in spec.tables:
            latex = grid_latex(frame, table) if isinstance(table, GridTable) else runs_latex(frame, table)
            (staging / f"{table.name}.tex").write_text(latex, encoding="utf-8")
            body.append(f"\\input{{{table.name}.tex}}")
        tracker = Tracker(tracking_uri)
        for figure in spec.figures:
            if isinstance(figure, Curve):
                ids = list(frame["run_id"])
                epochs = histories(tracker, ids, "train.epoch") if figure.x == "epoch" else {}
                points = curve_frame(frame, figure, histories(tracker, ids, figure.metric), epochs)
                curve(points, figure, staging / f"{figure.name}.png")
            else:
                heatmap(frame, figure, staging / f"{figure.name}.png")
            body.append(
                "\\begin{figure}[h]\\centering"
                f"\\includegraphics[width=0.6\\linewidth]{{{figure.name}.png}}\\end{{figure}}"
            )
        frame.to_csv(staging / "runs.csv", index=False)
        document = DOCUMENT.format(
            title=escape_latex(spec.title),
            study=escape_latex(study),
            profile=escape_latex(parent.data.tags.get("profile", "?")),
            run_id=parent.info.run_id,
            n=len(frame),
            body="\n".join(body),
        )
        (staging / "report.tex").write_text(document, encoding="utf-8")
        if pdf:
            _compile(staging)
        _replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _compile(folder: Path) -> None:
    """report.tex -> report.pdf; a missing or failing pdflatex is a notice, not a failure."""
    if shutil.which("pdflatex") is None:
        click.echo(
            "notice: pdflatex not found, so no report.pdf (install texlive-latex-recommended)", err=True
        )
        return
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"]
    result = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=120)
    for suffix in (".aux", ".log", ".out"):
        (folder / f"report{suffix}").unlink(missing_ok=True)
    if result.returncode != 0:
        (folder / "report.pdf").unlink(missing_ok=True)
        tail = [line for line in result.stdout.splitlines() if line.startswith("!")][:1]
        click.echo(f"notice: pdflatex failed ({' '.join(tail) or 'see report.tex'}); no report.pdf", err=True)


def _replace(staging: Path, target: Path) -> None:
    """Swap the finished staging folder in for the old report."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
