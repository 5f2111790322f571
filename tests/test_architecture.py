"""The layer table in docs/architecture.md, the import-linter contract and the tree agree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "singletable"


def _doc_layers() -> list[list[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "`singletable" in line]
    return [re.findall(r"`(singletable(?:\.\w+)?)`", row.split("|")[2]) for row in rows]


def _contract_layers() -> list[list[str]]:
    # tomllib is Python 3.11+; the contract's layer list is simple enough to read directly.
    text = (ROOT / "pyproject.toml").read_text()
    (block,) = re.findall(r'type = "layers"\nlayers = \[\n(.*?)\n\]', text, re.S)
    layers = re.findall(r'"([^"]+)"', block)
    return [[name.strip() for name in layer.split("|")] for layer in layers]


def _top_level_modules() -> set[str]:
    names = set()
    for path in PACKAGE.iterdir():
        if path.name.startswith("_") or path.name == "py.typed":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            names.add(f"singletable.{path.name}")
        elif path.suffix == ".py":
            names.add(f"singletable.{path.stem}")
    return names


def test_the_documented_layers_are_the_checked_layers_in_the_same_order() -> None:
    assert [sorted(layer) for layer in _doc_layers()] == [
        sorted(layer) for layer in _contract_layers()
    ]


def test_every_top_level_module_belongs_to_a_layer() -> None:
    layered = {name for layer in _contract_layers() for name in layer}
    # singletable.mypy is a mypy plugin: loaded by mypy, imported by nothing here.
    assert _top_level_modules() - {"singletable.mypy"} == layered


def test_no_function_level_imports_of_singletable_below_the_cli() -> None:
    # A lazy import inside a function is how cycles hide; only the CLI defers imports
    # (for start-up time), and only of layers below it.
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.ImportFrom)
                        and inner.module
                        and inner.module.startswith("singletable")
                    ):
                        offenders.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert offenders == []


# -- no import cycles -------------------------------------------------------------------


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Each module of ``package`` (under ``root``) -> the modules of the package it imports.

    Every import statement counts, wherever it is: at module level, under
    ``if TYPE_CHECKING:`` (an annotation that names a module is a dependency on it all the
    same) and inside functions. ``from pkg import name`` is an import of the submodule
    ``pkg.name`` when there is one, else of ``pkg`` (its ``__init__``).
    """
    paths = {_module_name(root, p): p for p in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name
                    while target and target not in paths:  # `import a.b.c` of a name in a.b
                        target = target.rpartition(".")[0]
                    if target:
                        edges.add(target)
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    source = f"{base}.{source}" if source else base
                for alias in node.names:
                    if f"{source}.{alias.name}" in paths:
                        edges.add(f"{source}.{alias.name}")
                    elif source in paths:
                        edges.add(source)
        edges.discard(name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def without_package_reexports(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` without the edges from a package's ``__init__`` to its own submodules.

    A package ``__init__`` imports its submodules only to re-export their names (that is
    all ours do); running it is Python's doing whenever any submodule is imported, not a
    dependency of one piece of code on another. So such an edge is left out: when a
    submodule imports its own package's names (``from singletable.operations import Put``
    inside ``singletable.operations``), the loop that makes is the package's name table,
    and not what this check is for. Every other edge, the package's imports of other
    packages included, counts.
    """
    return {
        name: {t for t in targets if not t.startswith(f"{name}.")}
        for name, targets in graph.items()
    }


def test_the_import_graph_has_no_cycles() -> None:
    graph = import_graph(ROOT, "singletable")
    # Sanity: the graph sees the package (every module) and the kinds of import it must.
    assert "singletable.operations.guarded" in graph["singletable.operations.items"]
    assert "singletable.model.unique" in graph["singletable.model.plan"]  # TYPE_CHECKING
    assert cycles(without_package_reexports(graph)) == []


def test_the_cycle_check_sees_every_kind_of_import(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.a import A\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    import pkg.b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub import c\n")
    (pkg / "sub" / "c.py").write_text("from .. import a\n")  # relative, to a submodule
    (pkg / "d.py").write_text("from pkg import A\n")  # a re-export: the package's __init__
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.b"}
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c"]]
    # A submodule importing its own package's re-exports: a loop only through __init__.
    (pkg / "a.py").write_text("from pkg import A\n")
    graph = import_graph(tmp_path, "pkg")
    assert cycles(graph) == [["pkg", "pkg.a"]]
    assert cycles(without_package_reexports(graph)) == []
