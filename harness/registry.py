"""Name -> method class. Duplicate names fail loudly; unknown names get close-match suggestions."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import TypeVar

from harness.errors import HarnessError

T = TypeVar("T", bound=type)

_METHODS: dict[str, type] = {}


def register_method(name: str) -> Callable[[T], T]:
    """Class decorator: `@register_method("scl")` makes the class available as `method: scl`."""

    def decorate(cls: T) -> T:
        if name in _METHODS:
            raise ValueError(
                f"method {name!r} is registered twice ({_METHODS[name].__module__}, {cls.__module__})"
            )
        cls.name = name
        _METHODS[name] = cls
        return cls

    return decorate


def method_names() -> list[str]:
    _load_builtin_methods()
    return sorted(_METHODS)


def get_method(name: str) -> type:
    """The registered method class for `name`; an unknown name errors with the closest matches."""
    _load_builtin_methods()
    if name in _METHODS:
        return _METHODS[name]
    close = difflib.get_close_matches(name, list(_METHODS), n=3, cutoff=0.4)
    hint = f"did you mean {', '.join(close)}?" if close else f"known methods: {', '.join(sorted(_METHODS))}"
    raise HarnessError(f"unknown method {name!r}; {hint} (see `harness methods`)")


def _load_builtin_methods() -> None:
    import harness.methods  # noqa: F401  (importing registers every built-in method)
