"""`harness paper [NAME]`: a paper in one command (issue 58 item 2). Its studies are the shipped ones whose
report spec names the paper (`paper:` in reports/<study>.yaml), in the order they can run (an ensemble
after the studies it reads). Without a name: the five papers, their studies and what has run here. With
one: `--dry-run` each study's trials and steps and which of the paper's claims the profile can judge
(harness.report.decidable), `--plan` their estimated time (harness plan), `--run` the studies in order
(resumable: each resumes where it stopped), then the paper's book (reports/build/paper-NAME/)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError, did_you_mean

if TYPE_CHECKING:
    from harness.resolve.study_spec import ResolvedStudy


@dataclass(frozen=True)
class Paper:
    """A paper: its short name (the first author), its title as the report specs give it, its studies in
    the order they can run."""

    key: str
    title: str
    studies: tuple[str, ...]


def papers() -> dict[str, Paper]:
    """Every paper the shipped report specs name, by short name."""
    from harness.report.book import run_order, source_studies
    from harness.report.spec import load_spec
    from harness.resolve.study_spec import STUDIES_DIR, read_study

    paths = sorted(STUDIES_DIR.glob("*.yaml"))
    titles = {p.stem: load_spec(p.stem).paper for p in paths}
    needs = {p.stem: source_studies(read_study(p).base) for p in paths}
    found: dict[str, Paper] = {}
    for title in sorted(set(titles.values())):
        key = re.sub(r"[^a-z]", "", title.split()[0].lower())
        studies = run_order([s for s, t in titles.items() if t == title], needs)
        found[key] = Paper(key, title, tuple(studies))
    return found


def find_paper(name: str) -> Paper:
    """A paper by its short name, a word of its title (`supcl`) or one of its studies."""
    known, wanted = papers(), name.lower()
    if wanted in known:
        return known[wanted]
    for paper in known.values():
        if name in paper.studies or len(wanted) > 3 and wanted in paper.title.lower():
            return paper
    hint = did_you_mean(name.lower(), known, f"one of {', '.join(known)}")
    raise HarnessError(f"no paper {name!r}; {hint} (`harness paper` lists them)")


def listing(done: dict[str, str]) -> Iterator[str]:
    """The papers with their studies, each with what has finished here (`done`: study -> counts)."""
    for paper in papers().values():
        yield f"{paper.key}: {paper.title}"
        for study in paper.studies:
            yield f"  {study:28s} finished here: {done.get(study) or 'none'}"
    yield "each: `harness paper NAME --dry-run` (what its profile runs and judges), then `--run`"


def dry_run_lines(paper: Paper, profile: str | None, data_dir: Path) -> Iterator[str]:
    """Per study in run order: its trials and training steps, and the paper's claims the profile can judge
    (and why the others cannot); then the paper's totals."""
    from harness.report.decidable import claim_problems, grid_frame
    from harness.report.spec import load_spec
    from harness.resolve.study_spec import load_study

    trials = steps = judged = claims = 0
    yield f"paper {paper.key}: {paper.title}"
    for number, name in enumerate(paper.studies, 1):
        study = load_study(name, profile)
        spec, (frame, runs) = load_spec(name), grid_frame(name, study.profile)
        decided = [c.id for c in spec.claims if not claim_problems(c, frame, runs, study.profile)]
        counted = study_steps(study, data_dir)
        trials, steps = trials + study.n_trials, steps + counted
        judged, claims = judged + len(decided), claims + len(spec.claims)
        shown = f": {', '.join(decided)}" if decided else ""
        judges = f"claims it can judge: {len(decided)} of {len(spec.claims)}{shown}"
        size = f"{study.n_trials} trial(s), ~{counted} steps"
        yield f"  {number}. {name} (profile {study.profile}): {size}; {judges}"
    yield f"  in all: {trials} trial(s), ~{steps} training step(s); claims judged: {judged} of {claims}"
    named = f" --profile {profile}" if profile else ""
    yield f"run them: `harness paper {paper.key}{named} --run` (resumable); their time: `--plan`"


def study_steps(study: ResolvedStudy, data_dir: Path) -> int:
    """The study's training steps over its grid as the dry run counts them (unknown ones left out)."""
    from harness.planning.dry_run import known_steps, trial_steps

    return sum(known_steps(trial_steps(run, data_dir)[0]) for run in study.grid_runs())
