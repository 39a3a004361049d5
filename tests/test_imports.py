"""The package's import graph, read with :mod:`ast` (function-level imports included).

Two rules of ``ARCHITECTURE.md``: no import cycle among the modules of ``slimebook``, and no module imports a
private name (one starting with ``_``) of another module. A third keeps the layers apart: modules outside
``slimebook.sphinxext`` never import Sphinx or docutils.

One exception, stated in :data:`BOOK_READER`: ``slimebook.book``, the command line's view of a book, imports Sphinx's
configuration reader and file discovery (``sphinx.config.Config.read``, ``sphinx.project.Project``, and the
``Tags`` and ``ConfigError`` they take and raise). The command line must read a book's ``conf.py`` and find its
documents exactly as the build does, and Sphinx's own code is the only copy that cannot drift from the build's;
those modules are not the build (no application, no docutils import of ours, no ``slimebook.sphinxext``, which
would load every directive for a command that only reads settings).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "_ext" / "slimebook"


def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of the package (``pkg/__init__.py`` is ``pkg``)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("slimebook", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """Every import in ``module`` anywhere in its body: ``(imported module, imported name or None, line)``."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    package = module if _is_package(module) else module.rpartition(".")[0]
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((base, alias.name, node.lineno))
    return found


def _graph() -> dict[str, set[str]]:
    return {module: {target for target, _name, _line in _imports(module) if target in MODULES} for module in MODULES}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, …, a]``, or None (depth-first search, colours)."""
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if colour.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in colour and (found := visit(nxt)):
                return found
        stack.pop()
        colour[node] = 2
        return None

    for start in sorted(graph):
        if start not in colour and (found := visit(start)):
            return found
    return None


def test_the_walk_sees_function_level_imports() -> None:
    assert ("slimebook.sphinxext", "setup") in {(t, n) for t, n, _ in _imports("slimebook")}


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_name_of_another_module(module: str) -> None:
    private = [f"line {line}: {target}.{name}" for target, name, line in _imports(module)
               if target in MODULES and target != module and name and name.startswith("_")
               and not (name.startswith("__") and name.endswith("__"))
               and name != "_"]  # gettext's ``_`` (slimebook.sphinxext.locale) is public by convention
    assert not private, f"{module} imports private names: {private}"


#: The one reader module allowed to import Sphinx, and what it may import (see the module docstring).
BOOK_READER = ("slimebook.book", {"sphinx.config", "sphinx.errors", "sphinx.project", "sphinx.util.tags"})


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith("slimebook.sphinxext")))
def test_readers_know_nothing_of_sphinx(module: str) -> None:
    leaks = [f"line {line}: {target}" for target, _name, line in _imports(module)
             if target.split(".")[0] in {"sphinx", "docutils", "myst_parser"}
             or target.startswith("slimebook.sphinxext")]
    if module == "slimebook":  # the Sphinx entry point delegates to the Sphinx layer
        leaks = [leak for leak in leaks if not leak.endswith("slimebook.sphinxext")]
    if module == BOOK_READER[0]:  # Sphinx's configuration reader and file discovery, nothing else
        leaks = [leak for leak in leaks if leak.split(": ", 1)[1] not in BOOK_READER[1]]
    assert not leaks, f"{module} reaches the Sphinx layer: {leaks}"


#: The packages of the Sphinx layer and the packages each may import (``ARCHITECTURE.md``). ``base`` is the shared
#: modules at the top of ``slimebook.sphinxext`` (config, context, diagnostics, guard), ``environment`` and
#: ``locale`` (the message catalogs, a package like Sphinx's own ``sphinx.locale``); the
#: package's ``__init__`` registers everything and may import anything. Nothing but ``accelerate`` imports
#: ``accelerate``'s modules, and nothing but ``accelerate`` and ``fixes`` themselves import ``fixes``' modules.
SPHINX_LAYERS: dict[str, set[str]] = {
    "base": {"base"},
    "gates": {"base", "gates"},
    "pages": {"base", "gates", "pages"},
    "directives": {"base", "gates", "pages", "directives"},
    "output": {"base", "output"},
    "fixes": {"base", "fixes"},
    "accelerate": {"base", "gates", "pages", "directives", "output", "fixes", "accelerate"},
}


def _layer(module: str) -> str | None:
    """The layer of a module of ``slimebook.sphinxext`` (None for the package's ``__init__`` and other modules)."""
    if not module.startswith("slimebook.sphinxext."):
        return None
    part = module.split(".")[2]
    if part in ("environment", "locale") or f"slimebook.sphinxext.{part}" in MODULES and not _is_package(
            f"slimebook.sphinxext.{part}"):
        return "base"
    return part


def test_every_module_of_the_sphinx_layer_has_a_layer() -> None:
    top = sorted(m for m in MODULES if m.count(".") == 2 and m.startswith("slimebook.sphinxext.")
                 and not _is_package(m))
    assert top == ["slimebook.sphinxext.config", "slimebook.sphinxext.context", "slimebook.sphinxext.diagnostics",
                   "slimebook.sphinxext.guard"], "a module at the top of sphinxext/ that belongs in a package"
    unknown = {_layer(m) for m in MODULES if _layer(m) is not None} - set(SPHINX_LAYERS)
    assert not unknown, f"packages without a declared layer: {unknown}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) is not None))
def test_the_sphinx_layer_imports_one_way(module: str) -> None:
    allowed = SPHINX_LAYERS[_layer(module)]  # type: ignore[index]
    wrong = [f"line {line}: {target}" for target, _name, line in _imports(module)
             if (layer := _layer(target)) is not None and layer not in allowed]
    assert not wrong, f"{module} ({_layer(module)}) imports against the layers: {wrong}"


#: Objects of Sphinx the Sphinx layer handles by these names (a private attribute read on one is a patch of Sphinx).
_HOST_OBJECTS = {"app", "env", "builder", "indexer", "config", "registry", "events", "translator", "tokenizer"}


def _host_private_reads(module: str) -> list[str]:
    """``obj._name`` reads where ``obj`` is (or ends in) one of :data:`_HOST_OBJECTS`, and imports of private modules
    of Sphinx, docutils, MyST or jieba (``sphinx.builders.html._build_info``)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = [f"line {line}: {target}" for target, _name, line in _imports(module)
             if target.split(".")[0] in {"sphinx", "docutils", "myst_parser", "jieba"}
             and any(part.startswith("_") and not part.startswith("__") for part in target.split("."))]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
            if name in _HOST_OBJECTS:
                found.append(f"line {node.lineno}: {name}.{node.attr}")
    return found


def test_the_private_read_finder_finds_them() -> None:
    assert _host_private_reads("slimebook.sphinxext.accelerate.parallelwrite")  # indexer._word_collector
    assert _host_private_reads("slimebook.sphinxext.accelerate.templatecache")  # sphinx.builders.html._build_info


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) not in {None, "accelerate", "fixes"}))
def test_only_accelerate_and_fixes_touch_private_parts_of_the_host(module: str) -> None:
    reads = _host_private_reads(module)
    assert not reads, f"{module} reads private parts of Sphinx (move the patch to accelerate/ or fixes/): {reads}"
