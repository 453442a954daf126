"""The one exception type the CLI turns into a one-line error and a non-zero exit (and its kind that a
study turns into a skipped trial), and the close-match hint every unknown name gets."""

import difflib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml


class HarnessError(Exception):
    """A user-facing error: the message names the problem and the fix, on one line."""


class ServiceUnavailable(BaseException):  # noqa: N818 (a stop, as KeyboardInterrupt is, not an error)
    """The Optuna database or the MLflow tracking server stayed away longer than the retries wait
    (harness.fleet.steady_storage; MLflow's own HTTP retries). The process stops as for an interruption,
    closing the runs it can, and the CLI exits 1 with this one line, which says to re-run once the
    service is back. Not an Exception: Optuna's trial loop (`catch=(Exception,)`) would count it as the
    trial's own failure and go on to the next trial, which would wait out the same outage again."""

    def __init__(self, message: str, service: str) -> None:
        super().__init__(message)
        self.service = service  # "database" or "tracking"


def tracking_unreachable(exc: BaseException) -> str | None:
    """The first line of an MLflow client error that means the tracking server could not be reached
    after MLflow's own retries (connection refused, timeouts, 5xx answers), or that its database stayed
    busy past the harness's (`tracking_server_busy`), else None."""
    text = str(exc)
    if tracking_server_busy(exc):
        return text.splitlines()[0][:300]
    if type(exc).__name__ != "MlflowException" or "API request to" not in text:
        return None
    gone = ("Max retries exceeded", "timeout", "Connection", "error code 50")
    return text.splitlines()[0][:300] if any(word in text for word in gone) else None


# what an MLflow server answers when its own database could not serve the request: every connection of its
# pool taken, or the database restarting or unreachable (harness.tracking.steady_client)
SERVER_DATABASE_BUSY = ("QueuePool limit", "server closed the connection unexpectedly",
                        "terminating connection due to administrator command", "the database system is",
                        "could not connect to server", 'connection to server at "')  # fmt: skip


def tracking_server_busy(exc: BaseException) -> bool:
    """Whether `exc` is an MLflow server's answer (a RestException) saying its database could not serve the
    request: nothing was done, and the request may be made again."""
    if type(exc).__name__ != "RestException":
        return False
    return any(sign in str(exc) for sign in SERVER_DATABASE_BUSY)


class TrialSkipped(HarnessError):
    """A trial that cannot run here for want of something optional (a GloVe vectors file): the study
    runner prunes it and prints the one-line message, which says what to give, and goes on."""


# what other tools call the harness's fields (Hugging Face's TrainingArguments, sentence-transformers)
SYNONYMS = {"learning_rate": "lr", "per_device_train_batch_size": "batch_size",
            "train_batch_size": "batch_size", "num_train_epochs": "epochs", "num_epochs": "epochs",
            "max_length": "max_seq_length",
            "max_len": "max_seq_length", "warmup_steps": "warmup_ratio", "temp": "temperature",
            "eval_steps": "eval_every", "per_device_eval_batch_size": "eval_batch_size",
            "metric_for_best_model": "objective_metric", "load_best_model_at_end": "keep_best"}  # fmt: skip


def did_you_mean(name: str, known: Iterable[str], otherwise: str, cutoff: float = 0.5) -> str:
    """ "did you mean a, b?" for the names closest to `name` (or the harness's name for another tool's,
    `learning_rate` -> `lr`), else `otherwise`."""
    known = list(known)
    if SYNONYMS.get(name) in known:
        return f"did you mean {SYNONYMS[name]}?"
    close = difflib.get_close_matches(name, known, n=3, cutoff=cutoff)
    return f"did you mean {', '.join(close)}?" if close else otherwise


def folded(name: str) -> str:
    """`STS-B`, `sts_b`, `stsb` -> `stsb`: a name as people misremember its case and separators."""
    return re.sub(r"[-_\s]", "", name).casefold()


def did_you_mean_any(name: str, known: Iterable[str], otherwise: str) -> str:
    """`did_you_mean` for names people shorten or write in other cases (`STS-B`, `stsb`, `sickr`): matched
    ignoring case, '-' and '_': the same name, else names it begins or that begin it (the shortest of a
    family: STSBenchmark, not also STSBenchmark-dev), else the closest."""
    names: dict[str, list[str]] = {}
    for one in known:
        names.setdefault(folded(one), []).append(one)
    key = folded(name)
    keys = [key] if key in names else [k for k in names if key and (k.startswith(key) or key.startswith(k))]
    keys = sorted((k for k in keys if not any(k != other and k.startswith(other) for other in keys)), key=len)
    if not keys:
        keys = difflib.get_close_matches(key, list(names), n=3, cutoff=0.6)
    found = list(dict.fromkeys(n for k in keys for n in names[k]))[:3]
    return f"did you mean {', '.join(found)}?" if found else otherwise


def mask_password(text: str) -> str:
    """`scheme://user:***@host/...`: a URL, or a message with URLs in it, fit for messages and logs."""
    return re.sub(r"(://[^:/@\s]+:)[^@\s]*@", r"\1***@", text)


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


# PyYAML's problems, by a phrase in them, and what usually fixes them
YAML_FIXES = (
    ("expected <block end>", "check the indentation of that line"),
    ("did not find expected key", "check the indentation of that line"),
    ("found character '\\t'", "indent with spaces, not tabs"),
    ("mapping values are not allowed here", "quote a value that holds ': ', or check the indentation"),
    ("undefined alias", "quote a value that starts with '*'"),
    ("could not determine a constructor", "quote a value that starts with '!'"),
    ("found unexpected end of stream", "close the quote opened at {opened}"),
    ("expected ',' or ']'", "close the '[' opened at {opened}, or put a ',' between its items"),
    ("expected ',' or '}'", "close the '{' opened at {opened}, or put a ',' between its items"),
    ("expected the node content, but found '<stream end>'", "close the '[' or '{' left open"),
)


def yaml_error(path: Path | str, exc: "yaml.YAMLError") -> HarnessError:
    """`file:line:column: not valid YAML: problem (fix)`, the position 1-based as editors count, where
    PyYAML found the problem (a quote or bracket left open: where it opened)."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    fix = next((fix for phrase, fix in YAML_FIXES if phrase in problem), None)
    opened = getattr(exc, "context_mark", None)
    if fix:
        at = f"{opened.line + 1}:{opened.column + 1}" if opened is not None else "before"
        fix = fix.replace("{opened}", at)
    return HarnessError(f"{where}: not valid YAML: {problem}" + (f" ({fix})" if fix else ""))
