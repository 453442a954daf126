"""YAML that users write or share (study files, report specs, `--set` values), read within bounds, each
refused in one line before anything expands it:
- a file larger than MAX_BYTES (checked before it is read);
- nesting deeper than MAX_DEPTH (checked while PyYAML composes the document, so never a RecursionError);
- a document whose aliases expand to more than MAX_VALUES values (a "billion laughs" file: nine anchors
  of nine aliases each are 9**9 strings to any reader that walks the value), or that refers to itself.
The expansion is counted on the composed nodes, each shared node once, before Python objects are built.
What PyYAML itself refuses is one line with its position (harness.errors.yaml_error). Real study files
use few aliases and nest five levels deep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.errors import HarnessError, read_utf8, yaml_error

MAX_BYTES = 1_000_000
MAX_DEPTH = 50
MAX_VALUES = 100_000


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, bounding nesting as it composes and expansion before it constructs."""

    def __init__(self, text: str, where: str) -> None:
        super().__init__(text)
        self.where, self.depth = where, 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise HarnessError(f"{self.where}: nested more than {MAX_DEPTH} levels deep; flatten it")
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        try:
            values = _expanded(node, {}, set())
        except HarnessError as exc:
            raise HarnessError(f"{self.where}: {exc}") from None
        if values > MAX_VALUES:
            raise HarnessError(
                f"{self.where}: its aliases (*name) expand to more than {MAX_VALUES:,} values; write them out"
            )
        return self.construct_document(node)


def _expanded(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """How many values `node` holds once every alias is written out (shared nodes counted once each time
    they are used, computed once)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise HarnessError("a YAML value contains itself (an alias to an enclosing anchor); write it out")
    open_nodes.add(key)
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded(child, sizes, open_nodes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(
            _expanded(k, sizes, open_nodes) + _expanded(v, sizes, open_nodes) for k, v in node.value
        )
    else:
        size = 1
    open_nodes.discard(key)
    sizes[key] = size
    return size


def load_yaml(text: str, where: str) -> Any:
    """The value `text` holds, or one line naming `where` and the problem."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > MAX_BYTES:
        raise HarnessError(f"{where}: {size:,} bytes, more than {MAX_BYTES:,} of YAML; is it the right file?")
    try:
        loader = _BoundedLoader(text, where)  # its reader refuses control characters at once
    except yaml.YAMLError as exc:
        raise yaml_error(where, exc) from None
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise yaml_error(where, exc) from None
    finally:
        loader.dispose()


def read_yaml(path: Path) -> Any:
    """A YAML file's value, its size checked before it is read."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise HarnessError(f"{path}: {size:,} bytes, more than {MAX_BYTES:,} of YAML; is it the right file?")
    return load_yaml(read_utf8(path), str(path))
