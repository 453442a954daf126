"""Name -> class registries (methods, their models, stage kinds, objectives). Each built-in entry
registers itself with a decorator in its own file; the registry imports its package of built-ins on first
lookup. Duplicate names fail loudly; unknown names get close-match suggestions."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from harness.errors import HarnessError, did_you_mean

if TYPE_CHECKING:
    from harness.methods.base import Method
    from harness.networks.base import MethodModel

T = TypeVar("T", bound=type)


class Registry(Generic[T]):
    """`what`: the noun in messages ("method"); `builtins`: the package whose import registers the
    built-in entries; `attribute`: set on each class to its registered name; `listing`: where to look."""

    def __init__(self, what: str, builtins: str, attribute: str, listing: str) -> None:
        self.what, self.builtins, self.attribute, self.listing = what, builtins, attribute, listing
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Class decorator: `@REGISTRY.register("name")`."""

        def decorate(cls: T) -> T:
            if name in self._entries:
                first = self._entries[name].__module__
                raise ValueError(f"{self.what} {name!r} is registered twice ({first}, {cls.__module__})")
            setattr(cls, self.attribute, name)
            self._entries[name] = cls
            return cls

        return decorate

    def entries(self) -> dict[str, T]:
        importlib.import_module(self.builtins)
        return dict(sorted(self._entries.items()))

    def names(self) -> list[str]:
        return list(self.entries())

    def get(self, name: str) -> T:
        """The class registered as `name`; an unknown name errors with the closest matches."""
        known = self.entries()
        if name in known:
            return known[name]
        hint = did_you_mean(name, known, f"known {self.what}s: {', '.join(known)}", cutoff=0.4)
        raise HarnessError(f"unknown {self.what} {name!r}; {hint} ({self.listing})")


METHODS: Registry[type[Method]] = Registry("method", "harness.methods", "name", "see `harness methods`")
register_method = METHODS.register
get_method = METHODS.get
method_names = METHODS.names

# A method's declaration names its nn.Module here (`model = "pipeline"`); the models, and torch with them,
# are imported on the first lookup, when a trial builds one, so declarations stay free of torch.
MODELS: Registry[type[MethodModel]] = Registry(
    "method model", "harness.networks", "model_name", "harness/networks/"
)
register_model = MODELS.register
get_model = MODELS.get
