"""The one exception type the CLI turns into a one-line error and a non-zero exit, and the close-match
hint every unknown name gets."""

import difflib
from collections.abc import Iterable


class HarnessError(Exception):
    """A user-facing error: the message names the problem and the fix, on one line."""


def did_you_mean(name: str, known: Iterable[str], otherwise: str, cutoff: float = 0.5) -> str:
    """ "did you mean a, b?" for the names closest to `name`, else `otherwise`."""
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=cutoff)
    return f"did you mean {', '.join(close)}?" if close else otherwise
