"""The package's shape: no import circles, no module too long to read, one meaning per name.

Read from the source with ``ast``, so no module is imported (and nothing compiled) but the
packages whose ``__all__`` is compared.
"""

from __future__ import annotations

import ast
import importlib
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "alphagomoku"
MAX_LINES = 600
# Packages with a public surface in __init__ (alphagomoku.nn loads its names lazily).
PUBLIC_PACKAGES = ("game", "mcts", "nn", "eval", "engine")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    """The package modules ``node`` imports: ``from a.b import c`` is ``a.b.c`` when that is a
    module, else ``a.b``."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            here = here[:len(here) - (node.level - 1)]
            base = ".".join(here + ([node.module] if node.module else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                 for alias in node.names]
    out = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its source, imports inside
    functions included. Importing a submodule runs its packages' ``__init__`` first, so an
    import of a module's own package is not an edge."""
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.update(t for t in _imported(module, path, node, modules)
                             if t != module and not module.startswith(t + "."))
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_sees_a_circle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "alphagomoku"
    (pkg / "game").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "game" / "__init__.py").write_text("")
    (pkg / "game" / "low.py").write_text("def f():\n    from alphagomoku.game.high import g\n")
    (pkg / "game" / "high.py").write_text("from . import low\n")
    (pkg / "game" / "alone.py").write_text("from alphagomoku.game import low\n")
    modules = {".".join(p.relative_to(tmp_path).with_suffix("").parts): p
               for p in pkg.rglob("*.py") if p.name != "__init__.py"}
    modules.update({"alphagomoku": pkg / "__init__.py",
                    "alphagomoku.game": pkg / "game" / "__init__.py"})
    assert cycles(import_graph(modules)) == [["alphagomoku.game.high", "alphagomoku.game.low"]]


def test_no_import_circles_between_the_package_modules():
    assert cycles(import_graph(_modules())) == []


def test_no_module_is_longer_than_a_reader_can_hold():
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert long == {}, f"modules over {MAX_LINES} lines: {long}"


def _defined_names(path: Path) -> dict[str, ast.AST]:
    """Public classes and UPPER_CASE constants a module defines (not those it imports, nor
    aliases such as ``WIN = vcf.WIN``, which restate another module's name)."""
    out: dict[str, ast.AST] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            targets, value = [node.name], None
        elif isinstance(node, ast.Assign):
            targets, value = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets, value = [node.target.id], node.value
        else:
            continue
        for name in targets:
            if name.startswith("_") or not (isinstance(node, ast.ClassDef) or name.isupper()):
                continue
            if isinstance(value, ast.Attribute) and value.attr == name:
                continue
            out[name] = node
    return out


def test_no_two_modules_define_a_constant_or_class_of_the_same_name():
    where: dict[str, list[str]] = defaultdict(list)
    for module, path in _modules().items():
        for name in _defined_names(path):
            where[name].append(module)
    assert {name: mods for name, mods in where.items() if len(mods) > 1} == {}


def test_the_packages_exports_mean_one_thing_per_name():
    seen: dict[str, tuple[str, object]] = {}
    clashes = []
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(f"alphagomoku.{package}")
        for name in module.__all__:
            value = getattr(module, name)
            if name in seen and seen[name][1] is not value:
                clashes.append(f"{name}: alphagomoku.{seen[name][0]} and alphagomoku.{package}")
            seen.setdefault(name, (package, value))
    assert clashes == []


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_exported_name_is_there(package):
    module = importlib.import_module(f"alphagomoku.{package}")
    assert [name for name in module.__all__ if not hasattr(module, name)] == []
