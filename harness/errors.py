"""The one exception type the CLI turns into a one-line error and a non-zero exit (and its kind that a
study turns into a skipped trial), and the close-match hint every unknown name gets."""

import difflib
import os
import re
from collections.abc import Iterable
from pathlib import Path


class HarnessError(Exception):
    """A user-facing error: the message names the problem and the fix, on one line."""


class TrialSkipped(HarnessError):
    """A trial that cannot run here for want of something optional (a GloVe vectors file): the study
    runner prunes it and prints the one-line message, which says what to give, and goes on."""


def did_you_mean(name: str, known: Iterable[str], otherwise: str, cutoff: float = 0.5) -> str:
    """ "did you mean a, b?" for the names closest to `name`, else `otherwise`."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=cutoff)
    return f"did you mean {', '.join(close)}?" if close else otherwise


def mask_password(url: str) -> str:
    """`scheme://user:***@host/...`: a URL fit for messages and logs."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def read_utf8(path: Path) -> str:
    """A text file the harness reads (study YAML, report spec), or one line saying it is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise HarnessError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def writable_dir(path: Path, what: str, fix: str) -> Path:
    """`path` as a directory this process can write (created if missing), or one line naming the problem."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise HarnessError(f"cannot use {path} for {what}: a file is in the way; {fix}") from None
    except OSError as exc:
        raise HarnessError(f"cannot create {path} for {what}: {exc.strerror}; {fix}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise HarnessError(f"cannot write to {path} for {what}: permission denied or read-only; {fix}")
    return path
