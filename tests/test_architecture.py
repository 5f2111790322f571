"""docs/architecture.md, the import-linter contracts and the tree agree, module by module."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "singletable"
# A mypy plugin: loaded by mypy, imported by nothing in the package, so in no layer.
OUTSIDE_THE_LAYERS = {"singletable.mypy"}


@dataclass(frozen=True)
class DocRow:
    """One row of a table in docs/architecture.md that names packages."""

    packages: tuple[str, ...]
    holds: str


@dataclass(frozen=True)
class LayersContract:
    """One ``type = "layers"`` contract of pyproject.toml, its layers fully named."""

    container: str | None
    layers: tuple[tuple[str, ...], ...]


def _doc_rows() -> list[DocRow]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = []
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| ") and len(cells) > 3 and "`singletable" in cells[2]:
            packages = tuple(re.findall(r"`(singletable(?:\.\w+)*)`", cells[2]))
            rows.append(DocRow(packages, cells[3]))
    return rows


def _layers_contracts() -> list[LayersContract]:
    # tomllib is Python 3.11+ (we support 3.10); the contract blocks are simple to read.
    text = (ROOT / "pyproject.toml").read_text()
    contracts = []
    for block in text.split("[[tool.importlinter.contracts]]")[1:]:
        if 'type = "layers"' not in block:
            continue
        containers = re.findall(r'containers = \["([^"]+)"\]', block)
        (listed,) = re.findall(r"\nlayers = \[\n(.*?)\n\]", block, re.S)
        container = containers[0] if containers else None
        prefix = f"{container}." if container else ""
        layers = tuple(
            tuple(prefix + name.strip() for name in layer.split("|"))
            for layer in re.findall(r'"([^"]+)"', listed)
        )
        contracts.append(LayersContract(container, layers))
    return contracts


def _modules() -> list[str]:
    """Every module of the package, dotted (a package is its ``__init__``)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def test_the_documented_layers_are_the_checked_layers_in_the_same_order() -> None:
    rows = _doc_rows()
    for contract in _layers_contracts():
        depth = 2 if contract.container is None else contract.container.count(".") + 2
        documented = [
            sorted(row.packages)
            for row in rows
            if all(name.count(".") + 1 == depth for name in row.packages)
            and all(
                contract.container is None or name.startswith(f"{contract.container}.")
                for name in row.packages
            )
        ]
        assert documented == [sorted(layer) for layer in contract.layers], contract.container


def test_every_module_sits_in_a_layer_of_a_contract() -> None:
    contracts = _layers_contracts()
    top = next(c for c in contracts if c.container is None)
    layered = {name for layer in top.layers for name in layer}
    unplaced = []
    for module in _modules():
        if module == "singletable" or module in OUTSIDE_THE_LAYERS:
            continue
        top_name = ".".join(module.split(".")[:2])
        if top_name not in layered:
            unplaced.append(module)
        for contract in contracts:
            container = contract.container
            if container is None or not module.startswith(f"{container}."):
                continue
            # A module inside a container must belong to one of its rooms, not sit loose.
            rooms = {name for layer in contract.layers for name in layer}
            if not any(module == room or module.startswith(f"{room}.") for room in rooms):
                unplaced.append(module)
    assert unplaced == []


def test_every_module_is_named_in_the_row_of_its_package() -> None:
    rows = _doc_rows()
    documented = {name: row for row in rows for name in row.packages}
    missing = []
    for module in _modules():
        if module == "singletable" or module in OUTSIDE_THE_LAYERS or module in documented:
            continue
        # A module (or a package with no row of its own) is named, by its last part, in
        # the row of the nearest documented package above it.
        owner, _, stem = module.rpartition(".")
        while owner not in documented and "." in owner:
            owner = owner.rpartition(".")[0]
        row = documented.get(owner)
        if row is None or f"`{stem}`" not in row.holds:
            missing.append(module)
    assert missing == [], "name these modules in docs/architecture.md"


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
