"""`harness report --all`: the reproduction book. A section per paper: its claims (what its own tables say
of each, the harness's verdict where its study ran, those no table decides), then every shipped study
that has runs in the store; the studies not run yet on one page, in the order they can run (a study
after the ones it reads: an ensemble after its members) with the command for each; the store's other
studies (a researcher's own YAML files elsewhere, derived studies) named with the command that reports
each."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import HarnessError
from harness.report.build import DOCUMENT, compile_pdf, replace_folder, write_study
from harness.report.claims_list import claims_list
from harness.report.findings import StudyFindings, log_findings, summary_page
from harness.report.spec import ReportSpec, load_spec
from harness.report.tables import escape_latex
from harness.staging import staged
from harness.stats.resample import Resampler
from harness.tracking.tracker import ROLE_TAG, Tracker, require_store


@dataclass
class Book:
    """What `harness report --all` wrote: the folder, the studies built, the commands that would run the
    others, and the store's studies outside studies/."""

    folder: Path
    built: list[str] = field(default_factory=list)
    findings: list[StudyFindings] = field(default_factory=list)
    not_run: dict[str, str] = field(default_factory=dict)  # study -> the command that runs it
    needs: dict[str, list[str]] = field(default_factory=dict)  # study -> the studies whose runs it reads
    others: dict[str, str] = field(default_factory=dict)  # own or derived study -> what it is


def run_command(study: str, profile: str | None) -> str:
    """The command that runs `study` in the profile a book is built from (the smoke profile by default:
    offline, minutes; a paper profile needs the hub and a GPU)."""
    return f"harness run-study {study} --profile {profile or 'smoke'}"


def source_studies(base: dict) -> list[str]:
    """The studies whose runs a study reads (an ensemble's `source_study`: one or a list), else none."""
    found = base.get("source_study")
    return [] if not found else [found] if isinstance(found, str) else list(found)


def run_order(studies: list[str], needs: dict[str, list[str]]) -> list[str]:
    """`studies` with each after the studies it reads (`needs`), otherwise in their given order."""
    ordered: list[str] = []

    def place(study: str) -> None:
        if study in ordered:
            return
        for needed in needs.get(study, []):
            if needed in studies:
                place(needed)
        ordered.append(study)

    for study in studies:
        place(study)
    return ordered


def not_run_page(book: Book, specs: dict[str, ReportSpec]) -> str:
    """One page listing the studies without runs in the order they can run: what each fills and the exact
    command, unbroken on a line of its own."""
    items = []
    for study in run_order(list(book.not_run), book.needs):
        sources = book.needs.get(study, [])
        needed = " and ".join(f"\\texttt{{{escape_latex(n)}}}" for n in sources)
        whose = "its" if len(sources) == 1 else "their"
        after = f" (after {needed}: it reads {whose} runs)" if needed else ""
        items.append(f"\\item {escape_latex(specs[study].title)}{after}\\\\\n"
                     f"\\mbox{{\\texttt{{{escape_latex(book.not_run[study])}}}}}")  # fmt: skip
    return (
        "\\section*{Studies not run yet}\n"
        f"{len(book.not_run)} of {len(specs)} studies have no finished runs in this MLflow store, so the "
        "book has no section for them. Each runs with the command under it, in this order, then "
        "\\texttt{harness report --all} again.\n\n\\small\\begin{itemize}\\setlength{\\itemsep}{2pt}\n"
        + "\n".join(items)
        + "\n\\end{itemize}\\normalsize\n"
    )


def other_studies_page(book: Book) -> str:
    """The store's studies that are not in studies/ (own YAML files, derived studies): named with what
    they are and the command that reports each (the book holds the shipped studies only)."""
    items = "\n".join(
        f"\\item \\texttt{{{escape_latex(name)}}}: {escape_latex(what)}\\\\\n"
        f"\\mbox{{\\texttt{{harness report {escape_latex(name)}}}}}"
        for name, what in sorted(book.others.items())
    )
    return (
        "\\section*{Other studies in this store}\nThe book holds the shipped studies; these have runs here "
        "too, each with its own report.\n\n\\small\\begin{itemize}\\setlength{\\itemsep}{2pt}\n"
        f"{items}\n\\end{{itemize}}\\normalsize\n"
    )


def other_studies(tracker: Tracker, shipped: set[str]) -> dict[str, str]:
    """name -> what it is, for the store's experiments that hold a study's runs but are not shipped."""
    from harness.resolve.derived import DERIVED_CHANGES, DERIVED_FROM

    found = {}
    for experiment in tracker.experiments():
        if experiment.name in shipped:
            continue
        tags = experiment.tags
        if DERIVED_FROM in tags:
            found[experiment.name] = f"derived from {tags[DERIVED_FROM]} ({tags.get(DERIVED_CHANGES, '?')})"
        elif "study.path" in tags:
            found[experiment.name] = f"a study from {tags['study.path']}"
        elif tracker.search_runs([experiment.experiment_id], f"tags.`{ROLE_TAG}` = 'study'", max_results=1):
            found[experiment.name] = "a study whose YAML path was not recorded"
    return found


def build_book(
    tracking_uri: str | None,
    out: str,
    profile: str | None,
    pdf: bool = True,
    resampler: Resampler | None = None,
    statistics: bool = True,
    data_dir: str | None = None,
    only: list[str] | None = None,
    name: str = "book",
) -> Book:
    """Every shipped study (or `only` these) in one document (`<name>/book.tex`, `book.pdf`): a section per
    paper, a subsection per study that has runs (its spec's title), each study's files in its own folder;
    the studies without runs and the store's other studies listed on the first pages."""
    from harness.resolve.study_spec import STUDIES_DIR, read_study

    tracker = Tracker(require_store(tracking_uri))
    target = Path(out) / name
    book = Book(target)
    with staged(target.parent, f".{name}-", "the book") as staging:
        sections: dict[str, list[str]] = {}
        paths = sorted(p for p in STUDIES_DIR.glob("*.yaml") if only is None or p.stem in only)
        specs = {p.stem: load_spec(p.stem) for p in paths}
        book.needs = {p.stem: needed for p in paths if (needed := source_studies(read_study(p).base))}
        for study, spec in specs.items():
            (staging / study).mkdir()
            try:
                body, findings, _ = write_study(
                    study, tracker, staging / study, profile, f"{study}/", resampler, statistics, data_dir
                )
            except HarnessError:  # no runs (or none finished) in this store
                (staging / study).rmdir()
                book.not_run[study] = run_command(study, profile)
                continue
            book.built.append(study)
            book.findings.append(findings)
            part = f"\\subsection{{{escape_latex(spec.title)}}}\n{body}\n\\clearpage"
            sections.setdefault(spec.paper, []).append(part)
        book.not_run = {study: book.not_run[study] for study in run_order(list(book.not_run), book.needs)}
        book.others = other_studies(tracker, set(specs)) if only is None else {}
        papers = sorted({spec.paper for spec in specs.values()})  # every paper: its claims need no run
        body = "\n".join(f"\\section{{{escape_latex(paper)}}}\n" + summary_page(paper, book.findings)
                          + claims_list(paper, specs, book.findings) + "\n".join(sections.get(paper, []))
                          for paper in papers)  # fmt: skip
        front = "\\tableofcontents\n\\clearpage\n" + (not_run_page(book, specs) if book.not_run else "")
        front += other_studies_page(book) if book.others else ""
        front += "\\clearpage\n" if book.not_run or book.others else ""
        document = DOCUMENT.format(title="Reproduction book: the five papers' tables, paper beside harness",
                                   body=front + "\n" + body)  # fmt: skip
        (staging / "book.tex").write_text(document, encoding="utf-8")
        if pdf:
            compile_pdf(staging, "book")
        replace_folder(staging, target)
    for findings in book.findings:
        log_findings(tracker, findings)
    return book
