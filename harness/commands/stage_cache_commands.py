"""`harness cache ls | du | prune`: the stage cache's entries (harness.train.stage_cache)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from harness.errors import HarnessError


@click.group("cache")
def cache_group() -> None:
    """The stage cache: trained stages that trials reuse (runs with stage_cache: true)."""


CACHE_DIR_HELP = "the cache folder (default: HARNESS_STAGE_CACHE, else .harness/stage-cache)"


@cache_group.command("ls")
@click.option("--dir", "folder", help=CACHE_DIR_HELP)
def cache_ls(folder: str | None) -> None:
    """Every entry: key, stages, size, age, last use, the run that trained it."""
    from harness.train.stage_cache import StageCache

    cache = StageCache(Path(folder) if folder else None)
    entries = cache.entries()
    if not entries:
        click.echo(f"no entries in {cache.root}")
        return
    now = time.time()
    click.echo(f"{'key':12s} {'size':>9s} {'age':>6s} {'used':>6s}  {'run':32s} stages")
    for e in entries:
        click.echo(
            f"{e['key'][:12]} {_size(e['bytes']):>9s} {_age(now - e['created']):>6s} "
            f"{_age(now - e['used']):>6s}  {e.get('source_run', '')[:32]:32s} {e.get('stages', '')}"
        )


@cache_group.command("du")
@click.option("--dir", "folder", help=CACHE_DIR_HELP)
def cache_du(folder: str | None) -> None:
    """The entries' total size."""
    from harness.train.stage_cache import StageCache

    cache = StageCache(Path(folder) if folder else None)
    entries = cache.entries()
    click.echo(f"{_size(sum(e['bytes'] for e in entries))} in {len(entries)} entries ({cache.root})")


@cache_group.command("prune")
@click.option(
    "--older-than", required=True, help="remove entries unused for this long: 30m, 12h, 7d; 0 for all"
)
@click.option("--dir", "folder", help=CACHE_DIR_HELP)
def cache_prune(older_than: str, folder: str | None) -> None:
    """Remove entries not used for a while (and leftovers of interrupted writes)."""
    from harness.train.stage_cache import StageCache

    cache = StageCache(Path(folder) if folder else None)
    removed = cache.prune(_duration(older_than))
    click.echo(f"removed {len(removed)} entries, {_size(sum(e['bytes'] for e in removed))} ({cache.root})")


def _duration(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    try:
        if text.strip() == "0":
            return 0.0
        return float(text[:-1]) * units[text[-1]]
    except (KeyError, ValueError, IndexError):
        raise HarnessError(
            f"--older-than {text!r}: give a number and a unit, e.g. 30m, 12h, 7d (or 0)"
        ) from None


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1000 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} GB"


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"
