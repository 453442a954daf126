"""The package's imports (deferred ones included) form no cycle (issue 8: config -> registry ->
methods -> loop -> config was one), and the settings module imports no method."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "harness"
# A registry loads its built-in entries on first lookup, and each entry imports the registry to register
# itself: that registration edge (entry -> registry) is the one loop the pattern needs, and is ignored.
# (harness.registry.Registry imports its built-ins by name, which this test does not see.)
REGISTRIES = {"harness.evaluate.registry": "harness.evaluate.tasks"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """harness modules imported anywhere in the file (deferred imports too) except under TYPE_CHECKING."""
    found: set[str] = set()
    stack: list[ast.AST] = [ast.parse(path.read_text())]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            continue
        stack.extend(ast.iter_child_nodes(node))
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found |= {name for name in names if name in modules}
    parents = {p for name in found for p in _packages(name) if p in modules}
    return found | (parents - set(_packages(_module(path) + ".x")))


def _packages(name: str) -> list[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first: those are edges too (except the importing
    module's own packages, initialised before it)."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def test_no_import_cycles() -> None:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: _imports(path, set(files)) - {name} for name, path in files.items()}
    for registry, entries in REGISTRIES.items():
        for name in graph:
            if name.startswith(entries):
                graph[name].discard(registry)
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycle = trail[trail.index(target) :] + [target]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if target not in state:
                visit(target, [*trail, target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_settings_import_no_method() -> None:
    code = "import sys, harness.config; print(any(m.startswith('harness.methods') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


HEAVY = ("torch", "transformers", "mlflow", "sklearn", "scipy")
LIGHT_COMMANDS = [
    ["--help"],
    ["studies"],
    ["methods"],
    ["tasks"],
    ["run-study", "lambda_tau_sweep", "--dry-run"],
    ["run-study", "chen_heads", "--dry-run"],
    ["run-study", "supcl_seq_glue", "--dry-run"],
    ["run-study", "david_ensemble", "--dry-run"],
    ["run-study", "lambda_tau_sweep", "--profile", "nosuch"],
    ["run-study", "lambda_tau_sweep", "--tracking-uri", "foo://bar"],
    ["run-study", "lambda_tau_sweep", "--profile", "smoke", "--workers", "0"],
    ["worker", "lambda_tau_sweep", "--profile", "smoke"],
]


@pytest.mark.slow
def test_listing_commands_and_argument_errors_import_no_torch(tmp_path: Path) -> None:
    """Issue 23 item 3: what a researcher types to look around, and its argument errors, answer at once:
    none of these imports torch, transformers, MLflow, scikit-learn or SciPy (seconds of imports each)."""
    code = (
        "import sys\nfrom harness.commands.cli import main\nsys.argv[0] = 'harness'\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HARNESS_HOME": str(tmp_path / ".harness")}
    for args in LIGHT_COMMANDS:
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
        assert "HEAVY []" in out.stdout, (args, out.stdout[-300:], out.stderr[-300:])


# The layers, bottom to top (README "Layout"): a module imports only from its own layer or those below.
# Each name is a package of harness or a module at its root; every module of the package is in one.
LAYERS = [
    {"__init__", "backoff", "bar_line", "choices", "errors", "fields", "notices", "processes", "home",
     "places", "program", "device", "flops", "registry", "config", "staging", "yaml_input", "credentials"},
    {"data", "losses"},
    {"encoders"},
    {"train", "evaluate", "stats"},  # stats: the per-item record evaluate writes, scored by its registry
    {"tracking"},  # a run logs evaluation's records; an ensemble (methods) reads another study's runs
    {"stages"},
    {"scoring"},
    {"methods"},
    {"networks"},
    {"fleet"},
    {"resolve"},
    {"study"},
    {"planning"},
    {"report"},
    {"commands", "__main__"},
]  # fmt: skip


def _layer(module: str) -> int | None:
    """The layer of a harness module, by its first name below `harness` (the package itself: __init__)."""
    top = module.split(".")[1] if module.count(".") else "__init__"
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def test_every_module_has_a_layer() -> None:
    files = {_module(p) for p in PACKAGE.rglob("*.py")}
    assert not [name for name in sorted(files) if _layer(name) is None]


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    upward = []
    for name, path in files.items():
        own = _layer(name)
        for target in _imports(path, set(files)):
            layer = _layer(target)
            if layer > own:
                upward.append(f"{name} -> {target}")
    assert not upward, "imports from a higher layer: " + "; ".join(sorted(upward))


# The one door to MLflow (harness.tracking.tracker.Tracker) and the one to Optuna's internals
# (harness.fleet.optuna_access): what other modules may not do.
OPTUNA_PRIVATE = {"_storage", "_trial_id", "_study_id", "_backend", "_cached_frozen_trial"}


def _reaches(path: Path) -> list[str]:
    """A module's reaches past the doors: MLflow imported or a client used outside harness/tracking/,
    Optuna's private modules or attributes outside optuna_access.py."""
    name = _module(path)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not name.startswith("harness.tracking"):
            if isinstance(node, ast.Attribute) and node.attr == "client":
                found.append(f"{name}:{node.lineno} .client")
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            modules += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            found += [f"{name}:{node.lineno} imports {m}" for m in modules if m.split(".")[0] == "mlflow"]
        if name != "harness.fleet.optuna_access":
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("optuna") and any(part.startswith("_") for part in module.split(".")):
                found.append(f"{name}:{node.lineno} imports {module}")
            if isinstance(node, ast.Attribute) and node.attr in OPTUNA_PRIVATE:
                found.append(f"{name}:{node.lineno} .{node.attr}")
    return found


def test_mlflow_and_optunas_internals_each_have_one_door() -> None:
    reaches = [reach for path in sorted(PACKAGE.rglob("*.py")) for reach in _reaches(path)]
    assert not reaches, "past the doors: " + "; ".join(reaches)
