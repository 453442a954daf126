"""The one exception type the CLI turns into a one-line error and a non-zero exit."""


class HarnessError(Exception):
    """A user-facing error: the message names the problem and the fix, on one line."""
